/** Path normalization per RFC 3986 §6 as the reference states it, with Kong's choices where it is silent. */

// Kong's reserved set (kong/tools/uri.lua): their escapes stay, with uppercase hex
const RESERVED = new Set("!*'();:@&=+$,/?%#[]")
const utf8 = new TextDecoder('utf-8', { fatal: true })

const hexOf = (m: string) => m.toUpperCase()

/**
 * Percent-decoding as Kong does it: escapes of reserved characters are kept with uppercase hex;
 * unreserved and other characters are decoded (`%20` → space, `%C3%B8` → `ø`). Bytes that do not
 * make UTF-8 text keep their (uppercased) escapes, as a JS string cannot hold them raw.
 */
function decodeEscapes(path: string): string {
  return path.replace(/(?:%[0-9a-fA-F]{2})+/g, (run) => {
    let out = ''
    let bytes: number[] = []
    let escapes = ''
    const flush = () => {
      if (bytes.length === 0) return
      try {
        out += utf8.decode(Uint8Array.from(bytes))
      } catch {
        out += hexOf(escapes)
      }
      bytes = []
      escapes = ''
    }
    for (let i = 0; i < run.length; i += 3) {
      const escape = run.slice(i, i + 3)
      const byte = parseInt(escape.slice(1), 16)
      if (byte < 0x80 && RESERVED.has(String.fromCharCode(byte))) {
        flush()
        out += hexOf(escape)
      } else if (byte < 0x80) {
        flush()
        out += String.fromCharCode(byte)
      } else {
        bytes.push(byte)
        escapes += escape
      }
    }
    flush()
    return out
  })
}

/**
 * Decodes percent-encoded characters other than reserved ones, uppercases the hex of the
 * reserved ones, resolves `.` and `..` segments and collapses duplicate slashes.
 */
export function normalizePath(path: string): string {
  if (path === '' || path === '/') return path
  let uri = path.includes('%') ? decodeEscapes(path) : path
  if (!uri.includes('.') && !uri.includes('//')) return uri
  const out: string[] = []
  while (uri.length > 0) {
    if (uri === '/.') uri = '/'
    else if (uri === '/..') {
      uri = '/'
      out.pop()
    } else if (uri === '.' || uri === '..') uri = ''
    else if (uri.startsWith('../')) uri = uri.slice(3)
    else if (uri.startsWith('./')) uri = uri.slice(2)
    else if (uri.startsWith('/./')) uri = uri.slice(2)
    else if (uri.startsWith('/../')) {
      uri = uri.slice(3)
      out.pop()
    } else if (uri.startsWith('//')) uri = uri.slice(1)
    else {
      const i = uri.indexOf('/', 1)
      out.push(i === -1 ? uri : uri.slice(0, i))
      uri = i === -1 ? '' : uri.slice(i)
    }
  }
  return out.join('')
}
