/**
 * Lua functions return several values; the kit returns a `Values` for those, a plain value otherwise.
 * `undefined` stands for nil throughout the kit.
 */
export class Values {
  constructor(readonly list: readonly unknown[]) {}
}

/** Several return values, e.g. `values(undefined, 'missing content type')`. */
export const values = (...list: unknown[]): Values => new Values(list)

/** The returned values as a list with trailing nils dropped (the shape fixtures and traces use). */
export function toList(result: unknown): unknown[] {
  const list = result instanceof Values ? [...result.list] : result === undefined ? [] : [result]
  while (list.length > 0 && list[list.length - 1] === undefined) list.pop()
  return list
}

/** The (value, error) view of a result, for callers that want the first value or a soft failure. */
export function split(result: unknown): { value: unknown; err: unknown } {
  if (result instanceof Values) return { value: result.list[0], err: result.list[1] }
  return { value: result, err: undefined }
}

/** Lua's `type()` for a JS value, used in Kong's error messages. */
export function luaType(v: unknown): string {
  if (v === undefined || v === null) return 'nil'
  if (typeof v === 'object') return 'table'
  if (typeof v === 'bigint') return 'number'
  return typeof v
}

/** Lua's `tostring` for a JS value, as Kong's `%q` / concatenated messages show it. */
export function luaString(v: unknown): string {
  if (v === undefined || v === null) return 'nil'
  if (typeof v === 'object' && !Buffer.isBuffer(v)) return 'table: 0x00000000'
  return String(v)
}

/** cjson's encoding of a Lua value: an empty table is `{}`, whether it came as `[]` or `{}`. */
export const luaJson = (v: unknown): string =>
  JSON.stringify(v, (_k, x: unknown) => (Array.isArray(x) && x.length === 0 ? {} : x))
