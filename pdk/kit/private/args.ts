/** URL argument decoding as nginx does it, and the kit's argument limits. */
import { luaString, luaType } from './values.js'

/**
 * nginx's unescape of a URI component (ngx_http_lua_unescape_uri, which ngx.unescape_uri, ngx.decode_args,
 * ngx.req.get_uri_args and get_post_args share): `%XX` becomes its byte, a `%` not followed by two hex digits
 * stays as it is, `+` becomes a space when asked. Bytes in, bytes out.
 */
export function unescapeBytes(src: Buffer, plusIsSpace = true): Buffer {
  if (!src.includes(0x25) && !(plusIsSpace && src.includes(0x2b))) return src
  const out = Buffer.allocUnsafe(src.length)
  let n = 0
  for (let i = 0; i < src.length; i++) {
    const b = src[i]!
    const hi = b === 0x25 && i + 2 < src.length ? hex(src[i + 1]!) : -1
    const lo = hi === -1 ? -1 : hex(src[i + 2]!)
    if (lo !== -1) {
      out[n++] = hi * 16 + lo
      i += 2
    } else out[n++] = plusIsSpace && b === 0x2b ? 0x20 : b
  }
  return out.subarray(0, n)
}

const hex = (c: number): number =>
  c >= 0x30 && c <= 0x39 ? c - 0x30 : c >= 0x61 && c <= 0x66 ? c - 0x57 : c >= 0x41 && c <= 0x46 ? c - 0x37 : -1

/** unescapeBytes on text: the bytes it decodes to read as UTF-8 (what the JS faces see). */
export function unescape(s: string, plusIsSpace = true): string {
  if (!s.includes('%')) return plusIsSpace ? s.replace(/\+/g, ' ') : s
  return unescapeBytes(Buffer.from(s, 'utf8'), plusIsSpace).toString('utf8')
}

export type ArgValue<V = string> = V | true | Array<V | true>
export type ArgsTable<V = string> = Record<string, ArgValue<V>>

/**
 * How `max` counts, as the two OpenResty routines do: `args` (ngx.req.get_uri_args, so kong.request.get_query)
 * keeps at most `max` arguments, parts with an empty key not counted, and calls the result truncated when the
 * query has more than `max` `&`-separated parts; `parts` (ngx.decode_args, ngx.req.get_post_args) stops after
 * the `max`-th `&`-terminated part, empty ones included. `max` ≤ 0 is no limit.
 */
export type ArgsLimit = 'args' | 'parts'

/**
 * The one argument decoder (every face calls it): `a=1&b&c=&a=2` → `{a: ['1', '2'], b: true, c: ''}`.
 * A part whose key decodes to nothing is left out; keys and values go through `decode` (text for the JS faces,
 * bytes for Lua). `truncated` says whether `max` left some out.
 */
export function decodeArgsWith<V extends { length: number }>(
  query: string,
  max: number,
  limit: ArgsLimit,
  decode: (raw: string) => V,
  keyOf: (decoded: V) => string,
): { args: ArgsTable<V>; truncated: boolean } {
  const args: ArgsTable<V> = {}
  if (query === '') return { args, truncated: false }
  const parts = query.split('&')
  let keep = Infinity
  let truncated = false
  if (limit === 'args' && max > 0 && parts.length > max) {
    keep = max
    truncated = true
  }
  let kept = 0
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!
    // a trailing empty part (`a=1&`) is no argument, and nginx never counts it
    if (part === '' && i === parts.length - 1) break
    const eq = part.indexOf('=')
    const key = decode(eq === -1 ? part : part.slice(0, eq))
    if (key.length > 0) {
      const value: V | true = eq === -1 ? true : decode(part.slice(eq + 1))
      const name = keyOf(key)
      const prev = args[name]
      if (prev === undefined) args[name] = value
      else if (Array.isArray(prev)) prev.push(value)
      else args[name] = [prev, value]
      if (++kept === keep) return { args, truncated }
    }
    if (limit === 'parts' && max > 0 && i + 1 === max && i < parts.length - 1)
      return { args, truncated: parts.slice(i + 1).some((p) => p !== '') }
  }
  return { args, truncated }
}

const same = (s: string): string => s

/** Text arguments (the kit, the JS faces): `a=1&b&c=&a=2` → `{a: ['1', '2'], b: true, c: ''}`, at most `max`. */
export function decodeArgs(
  query: string,
  max: number,
  limit: ArgsLimit = 'args',
): { args: ArgsTable; truncated: boolean } {
  return decodeArgsWith(query, max, limit, unescape, same)
}

/**
 * nginx's `$arg_<name>`: the value of the first argument named so, whatever its case, as it is in the query
 * (not unescaped); undefined when none is, or when it has no `=`.
 */
export function argVariable(query: string, name: string): string | undefined {
  const want = name.toLowerCase()
  for (const part of query.split('&')) {
    const eq = part.indexOf('=')
    if (eq !== -1 && part.slice(0, eq).toLowerCase() === want) return part.slice(eq + 1)
  }
  return undefined
}

/** Kong's checks of an optional max_headers / max_args argument (1..1000). */
export function checkLimit(name: string, value: unknown, min = 1, max = 1000): void {
  if (value === undefined || value === null) return
  if (typeof value !== 'number') throw new Error(`${name} must be a number`)
  if (value < min) throw new Error(`${name} must be >= ${min}`)
  if (value > max) throw new Error(`${name} must be <= ${max}`)
}

/** Encodes an args table the way Kong's service.request.set_query does (keys sorted). */
export function encodeArgs(args: Record<string, unknown>): string {
  const parts: string[] = []
  for (const key of Object.keys(args).sort()) {
    const value = args[key]
    for (const v of Array.isArray(value) ? value : [value]) {
      if (v === true) parts.push(encodeURIComponent(key))
      else if (v === false) continue
      else if (typeof v === 'string' || typeof v === 'number')
        parts.push(`${encodeURIComponent(key)}=${encodeURIComponent(String(v))}`)
      else
        throw new Error(
          `invalid value "${luaString(v)}" for argument "${key}": got ${luaType(v)}, expected string, number or boolean`,
        )
    }
  }
  return parts.join('&')
}
