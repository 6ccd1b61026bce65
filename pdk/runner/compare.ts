/** Value comparison for expectations: JSON-like deep equality, bodies and headers, and plain rendering. */
import { headerKey, type HeadersTable } from '../headers.js'
import type { Failure } from './record.js'

/** A value as JSON shows it: nil → null, Buffers → text, Values already unpacked by the caller. */
export function plain(v: unknown): unknown {
  if (v === undefined) return null
  if (Buffer.isBuffer(v)) return v.toString('utf8')
  if (v instanceof Map) return Object.fromEntries([...v].map(([k, x]) => [k, plain(x)]))
  if (Array.isArray(v)) return v.map(plain)
  if (typeof v === 'object' && v !== null) {
    return Object.fromEntries(
      Object.entries(v)
        .filter(([, x]) => x !== undefined && typeof x !== 'function')
        .map(([k, x]) => [k, plain(x)]),
    )
  }
  return v
}

/** Deep equality of JSON values (key order ignored). */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return false
  if (Array.isArray(a) !== Array.isArray(b)) return false
  const ka = Object.keys(a as object)
  const kb = Object.keys(b as object)
  if (ka.length !== kb.length) return false
  return ka.every((k) => deepEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]))
}

/** True when every field of `expected` is in `actual` with a matching value (recursively, lists element by element, matchers allowed). */
export function isSubset(expected: unknown, actual: unknown): boolean {
  // a list is a table too: same length, each element a subset of its counterpart
  if (Array.isArray(expected))
    return (
      Array.isArray(actual) && expected.length === actual.length && expected.every((e, i) => isSubset(e, actual[i]))
    )
  if (typeof expected !== 'object' || expected === null || matcherOf(expected)) return matches(expected, actual)
  if (typeof actual !== 'object' || actual === null) return false
  return Object.entries(expected).every(([k, v]) => isSubset(v, (actual as Record<string, unknown>)[k]))
}

type Matcher = { $type: string | string[] } | { $match: string } | { $contains: unknown }

/** A partial matcher: an object whose one key is `$type`, `$match` or `$contains`. */
function matcherOf(v: unknown): Matcher | undefined {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return undefined
  const keys = Object.keys(v)
  return keys.length === 1 && (keys[0] === '$type' || keys[0] === '$match' || keys[0] === '$contains')
    ? (v as Matcher)
    : undefined
}

/** Lua's type name of a JSON value (tables for objects and arrays). */
const luaTypeOf = (v: unknown): string =>
  v === null || v === undefined ? 'nil' : typeof v === 'object' ? 'table' : typeof v

const regexps = new Map<string, RegExp>()
const regexp = (source: string): RegExp => {
  let re = regexps.get(source)
  if (!re) regexps.set(source, (re = new RegExp(source)))
  return re
}

/**
 * Deep equality where `expected` may hold partial matchers: `{"$type": "number"}` (Lua type names,
 * or a list of them), `{"$match": "regex"}` on text, `{"$contains": x}` (a substring of text, a
 * subset of a table, or for a list every element of x matching some element).
 */
export function matches(expected: unknown, actual: unknown): boolean {
  const m = matcherOf(expected)
  if (m) {
    if ('$type' in m) {
      const t = luaTypeOf(actual)
      return Array.isArray(m.$type) ? m.$type.includes(t) : m.$type === t
    }
    if ('$match' in m)
      return (typeof actual === 'string' || typeof actual === 'number') && regexp(m.$match).test(String(actual))
    const want = m.$contains
    if (typeof actual === 'string') return typeof want === 'string' && actual.includes(want)
    if (Array.isArray(actual)) {
      const items = Array.isArray(want) ? want : [want]
      return items.every((w) => actual.some((a) => matches(w, a)))
    }
    return isSubset(want, actual)
  }
  if (typeof expected !== 'object' || expected === null) return deepEqual(expected, actual)
  if (typeof actual !== 'object' || actual === null || Array.isArray(expected) !== Array.isArray(actual)) return false
  const ke = Object.keys(expected)
  if (ke.length !== Object.keys(actual).length) return false
  return ke.every((k) => matches((expected as Record<string, unknown>)[k], (actual as Record<string, unknown>)[k]))
}

/** Drops trailing nulls, as `returns` lists may. */
export function trimNulls(list: unknown[]): unknown[] {
  const out = [...list]
  while (out.length > 0 && out[out.length - 1] === null) out.pop()
  return out
}

const isTextMatcher = (v: unknown): boolean =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length === 1 && '$match' in v

/** A body against what is expected: text exactly (or a `$match`), anything else as JSON. */
export function compareBody(expected: unknown, actual: string | null, path: string, out: Failure[]): void {
  if (typeof expected === 'string' || isTextMatcher(expected)) {
    if (!matches(expected, actual)) out.push({ path, expected, actual })
    return
  }
  let parsed: unknown
  try {
    parsed = actual === null ? null : JSON.parse(actual)
  } catch {
    parsed = actual
  }
  if (!matches(expected, parsed)) out.push({ path, expected, actual: parsed })
}

/** Expected headers as a subset of `actual`: names case-insensitive, null for absent, an array for a repeated header. */
export function compareHeaders(
  expected: Record<string, unknown>,
  actual: HeadersTable,
  path: string,
  out: Failure[],
): void {
  const byKey = new Map(Object.entries(actual).map(([k, v]) => [headerKey(k), v]))
  for (const [name, want] of Object.entries(expected)) {
    const got = byKey.get(headerKey(name)) ?? null
    const same =
      want === null
        ? got === null
        : Array.isArray(want)
          ? matches(want, Array.isArray(got) ? got : got === null ? null : [got])
          : matches(want, got)
    if (!same) out.push({ path: `${path}.${name}`, expected: want, actual: got })
  }
}
