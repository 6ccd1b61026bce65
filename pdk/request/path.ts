/** Path normalization per RFC 3986 §6 as the reference states it. */

const UNRESERVED = /[A-Za-z0-9\-._~]/

/**
 * Decodes percent-encoded unreserved characters, uppercases the hex of the others, resolves
 * `.` and `..` segments and collapses duplicate slashes.
 */
export function normalizePath(path: string): string {
  if (path === '' || path === '/') return path
  let uri = path.replace(/%([0-9a-fA-F]{2})/g, (m, hex: string) => {
    const ch = String.fromCharCode(parseInt(hex, 16))
    return UNRESERVED.test(ch) ? ch : m.toUpperCase()
  })
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
