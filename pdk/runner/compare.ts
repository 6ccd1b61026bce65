/** Value comparison for expectations: JSON-like deep equality and plain rendering. */

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

/** True when every field of `expected` is in `actual` with an equal value (recursively). */
export function isSubset(expected: unknown, actual: unknown): boolean {
  if (typeof expected !== 'object' || expected === null || Array.isArray(expected)) return deepEqual(expected, actual)
  if (typeof actual !== 'object' || actual === null) return false
  return Object.entries(expected).every(([k, v]) => isSubset(v, (actual as Record<string, unknown>)[k]))
}

/** Drops trailing nulls, as `returns` lists may. */
export function trimNulls(list: unknown[]): unknown[] {
  const out = [...list]
  while (out.length > 0 && out[out.length - 1] === null) out.pop()
  return out
}
