/** URL argument decoding as nginx does it, and the kit's argument limits. */
import { luaString, luaType } from './values.js'

/** Percent-decodes, leaving malformed escapes as they are; `+` becomes a space when asked. */
export function unescape(s: string, plusIsSpace = true): string {
  if (plusIsSpace) s = s.replace(/\+/g, ' ')
  if (!s.includes('%')) return s
  const bytes: number[] = []
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c === 0x25 && /^[0-9a-fA-F]{2}$/.test(s.slice(i + 1, i + 3))) {
      bytes.push(parseInt(s.slice(i + 1, i + 3), 16))
      i += 2
    } else {
      bytes.push(...Buffer.from(s[i]!, 'utf8'))
    }
  }
  return Buffer.from(bytes).toString('utf8')
}

export type ArgValue = string | true | Array<string | true>
export type ArgsTable = Record<string, ArgValue>

/**
 * Decodes `a=1&b&c=&a=2` into `{a: ['1', '2'], b: true, c: ''}` keeping at most `max` arguments
 * (ngx.decode_args); `truncated` says whether some were dropped.
 */
export function decodeArgs(query: string, max: number): { args: ArgsTable; truncated: boolean } {
  const args: ArgsTable = {}
  let n = 0
  for (const part of query.split('&')) {
    if (part === '') continue
    if (n >= max) return { args, truncated: true }
    const eq = part.indexOf('=')
    const key = unescape(eq === -1 ? part : part.slice(0, eq))
    if (key === '') continue
    n++
    const value: string | true = eq === -1 ? true : unescape(part.slice(eq + 1))
    const prev = args[key]
    if (prev === undefined) args[key] = value
    else if (Array.isArray(prev)) prev.push(value)
    else args[key] = [prev, value]
  }
  return { args, truncated: false }
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
