/** Bytes and text codecs for ngx.*, cjson and resty.*: base64, digests, HMAC, JSON, URI escaping. */
import { createHash, createHmac, randomBytes, randomUUID } from 'node:crypto'
import { crc32 } from 'node:zlib'
import { unescapeBytes } from '../../kit/private/args.js'
import { LuaRef, SPARSE_ARRAY_MAX } from '../vm.js'
import type { HostOp } from './types.js'

/** A Lua string's bytes (a JS string is its UTF-8). */
export const bytesOf = (v: unknown): Buffer =>
  Buffer.isBuffer(v) ? v : Buffer.from(typeof v === 'number' ? fmtNumber(v) : String(v ?? ''), 'utf8')

/** C's "%.14g", as LuaJIT and cjson print numbers. */
export function fmtNumber(n: number): string {
  if (Number.isInteger(n) && Math.abs(n) < 1e15) return String(n)
  if (!Number.isFinite(n)) return Number.isNaN(n) ? 'nan' : n > 0 ? 'inf' : '-inf'
  const exp = Math.floor(Math.log10(Math.abs(n)))
  if (exp < -4 || exp >= 14) {
    const [m, e] = n.toExponential(13).split('e')
    const mant = m!.includes('.') ? m!.replace(/0+$/, '').replace(/\.$/, '') : m!
    const ev = Number(e)
    return `${mant}e${ev < 0 ? '-' : '+'}${String(Math.abs(ev)).padStart(2, '0')}`
  }
  const s = n.toPrecision(14)
  return s.includes('.') ? s.replace(/0+$/, '').replace(/\.$/, '') : s
}

const ESC: Record<string, string> = {
  '"': '\\"',
  '\\': '\\\\',
  '/': '\\/',
  '\b': '\\b',
  '\f': '\\f',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
}

/**
 * cjson.encode: `\/`, numbers as "%.14g", an empty table `{}` unless marked as an array. With
 * `bytes`, the text is built one char per byte (JS strings as their UTF-8 bytes, Buffers as they
 * are), so a Lua string that is not UTF-8 reaches the JSON byte for byte, as cjson copies it.
 */
export function cjsonEncode(v: unknown, depth = 0, bytes = false): string {
  if (depth > 1000) throw new Error('Cannot serialise, excessive nesting (1001)')
  if (v === undefined || v === null) return 'null'
  switch (typeof v) {
    case 'boolean':
      return String(v)
    case 'number':
      if (!Number.isFinite(v)) throw new Error('Cannot serialise number: must not be NaN or Infinity')
      return fmtNumber(v)
    case 'string':
      if (bytes) v = Buffer.from(v, 'utf8').toString('latin1')
      // eslint-disable-next-line no-control-regex -- cjson escapes control characters
      return `"${(v as string).replace(/["\\/\b\f\n\r\t]|[\u0000-\u001f\u007f]/g, (c) => ESC[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)}"`
    case 'object':
      break
    default:
      throw new Error(`Cannot serialise ${typeof v}: type not supported`)
  }
  if (Buffer.isBuffer(v)) return cjsonEncode(v.toString('latin1'), depth)
  if (v instanceof LuaRef) throw new Error(`Cannot serialise ${v.type}: type not supported`)
  // Array.from visits holes (an array_mt table's nils) as undefined: null, as lua-cjson writes them
  if (Array.isArray(v)) return `[${Array.from(v, (x) => cjsonEncode(x, depth + 1, bytes)).join(',')}]`
  const max = (v as { [SPARSE_ARRAY_MAX]?: number })[SPARSE_ARRAY_MAX]
  if (max !== undefined) {
    // lua-cjson's encode_sparse_array defaults (ratio 2, safe 10): an array with nulls in the holes, unless
    // its largest key passes 10 and twice the keys it has
    const o = v as Record<string, unknown>
    if (max > 10 && max > 2 * Object.keys(o).length) throw new Error('Cannot serialise table: excessively sparse array')
    return `[${Array.from({ length: max }, (_, i) => cjsonEncode(o[i + 1], depth + 1, bytes)).join(',')}]`
  }
  const parts: string[] = []
  for (const [k, x] of Object.entries(v)) parts.push(`${cjsonEncode(k, 0, bytes)}:${cjsonEncode(x, depth + 1, bytes)}`)
  return `{${parts.join(',')}}`
}

/** cjson.decode, with cjson's message for bad input. */
export function cjsonDecode(text: unknown): unknown {
  const s = bytesOf(text).toString('utf8')
  try {
    return JSON.parse(s) as unknown
  } catch (e) {
    // lua-cjson takes a control character inside a string as it is (an LLM's JSON with raw newlines in a value)
    const lenient = escapeRawControls(s)
    if (lenient !== s) {
      try {
        return JSON.parse(lenient) as unknown
      } catch {
        // the text's own error is the one to report
      }
    }
    const at = /position (\d+)/.exec((e as Error).message)
    // lua-cjson names where the token it could not read starts: a text that does not begin with a value (an LLM's
    // "Sure! {…}") fails at its first character that is not whitespace
    const first = s.search(/\S/)
    const startsBadly = first >= 0 && !/[[{"\-0-9tfn]/.test(s[first]!)
    const n = startsBadly ? first + 1 : at ? Number(at[1]) + 1 : s.trim() === '' ? 1 : s.length
    const token = s.trim() === '' ? 'end of string' : 'invalid token'
    throw new Error(`Expected value but found ${token} at character ${n}`, { cause: e })
  }
}

/** The text with the control characters inside its string literals escaped (\u00XX); the rest as it is. */
function escapeRawControls(s: string): string {
  let out = ''
  let inString = false
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!
    if (inString && c === '\\') {
      out += c + (s[i + 1] ?? '')
      i++
    } else if (c === '"') {
      inString = !inString
      out += c
    } else if (inString && c < ' ') out += `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`
    else out += c
  }
  return out
}

const UNRESERVED = /[A-Za-z0-9\-._~]/

/** ngx.escape_uri: every byte but RFC 3986's unreserved ones as %XX. */
function escapeUri(v: unknown): string {
  let out = ''
  for (const b of bytesOf(v)) {
    const c = String.fromCharCode(b)
    out += UNRESERVED.test(c) ? c : `%${b.toString(16).toUpperCase().padStart(2, '0')}`
  }
  return out
}

/** ngx.unescape_uri: the kit's one unescape (nginx's), on the bytes. */
const unescapeUri = (v: unknown): Buffer => unescapeBytes(bytesOf(v))

const digest = (alg: string, data: unknown) => createHash(alg).update(bytesOf(data)).digest()

export const CODEC_OPS: Record<string, HostOp> = {
  encode_base64: (_s, v, noPad) => {
    const b = bytesOf(v).toString('base64')
    return [noPad ? b.replace(/=+$/, '') : b]
  },
  decode_base64: (_s, v) => {
    const s = bytesOf(v).toString('latin1')
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(s) || s.replace(/=+$/, '').length % 4 === 1) return [undefined]
    return [Buffer.from(s, 'base64')]
  },
  encode_base64url: (_s, v) => [bytesOf(v).toString('base64url')],
  // padding is allowed, as nginx's decoder stops at '=' (Kong's jwt pads before decoding)
  decode_base64url: (_s, v) => {
    const s = bytesOf(v).toString('latin1')
    if (!/^[A-Za-z0-9_-]*={0,2}$/.test(s) || s.replace(/=+$/, '').length % 4 === 1) return [undefined, 'invalid input']
    return [Buffer.from(s, 'base64url')]
  },
  digest: (_s, alg, data) => [digest(String(alg), data)],
  hmac: (_s, alg, key, data) => [createHmac(String(alg), bytesOf(key)).update(bytesOf(data)).digest()],
  crc32: (_s, data) => [crc32(bytesOf(data))],
  random_bytes: (_s, n) => [randomBytes(Number(n))],
  uuid: () => [randomUUID()],
  json_encode: (_s, v) => [Buffer.from(cjsonEncode(v, 0, true), 'latin1')],
  json_decode: (_s, v) => [cjsonDecode(v)],
  escape_uri: (_s, v) => [escapeUri(v)],
  unescape_uri: (_s, v) => [unescapeUri(v)],
}
