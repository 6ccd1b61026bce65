/** Header validation with Kong's messages (kong/pdk/private/checks.lua). */
import { luaString, luaType } from './values.js'

const q = (v: unknown) => JSON.stringify(luaString(v))

/** Throws unless `value` is a string, number, boolean or array of strings. */
export function validateHeader(name: unknown, value: unknown): void {
  if (typeof name !== 'string') throw new Error(`invalid header name ${q(name)}: got ${luaType(name)}, expected string`)
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return
  if (Array.isArray(value)) {
    for (const v of value) {
      if (typeof v !== 'string')
        throw new Error(`invalid header value in array ${q(name)}: got ${luaType(v)}, expected string`)
    }
    return
  }
  throw new Error(
    `invalid header value for ${q(name)}: got ${luaType(value)}, expected array of string, string, number or boolean`,
  )
}

/** Throws unless `headers` is a table of valid headers. */
export function validateHeaders(headers: unknown): asserts headers is Record<string, unknown> {
  if (typeof headers !== 'object' || headers === null || Array.isArray(headers))
    throw new Error('headers must be a table')
  for (const [k, v] of Object.entries(headers)) {
    if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') continue
    if (Array.isArray(v)) {
      for (const vv of v) {
        if (typeof vv !== 'string')
          throw new Error(`invalid header value in array ${q(k)}: got ${luaType(vv)}, expected string`)
      }
      continue
    }
    throw new Error(
      `invalid header value for ${q(k)}: got ${luaType(v)}, expected string, number, boolean or array of strings`,
    )
  }
}

/** Header value as nginx stores it: empty strings become a space, numbers and booleans text. */
export function normalizeHeader(value: unknown): string | string[] {
  if (Array.isArray(value)) return value.map((v) => (v === '' ? ' ' : String(v)))
  if (value === '') return ' '
  return String(value)
}

/** True for Transfer-Encoding, which the kit refuses to set. */
export const isTransferEncoding = (name: string): boolean => /^transfer[-_]encoding$/i.test(name)
