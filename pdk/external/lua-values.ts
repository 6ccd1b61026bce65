/**
 * Values crossing between a plugin server and Kong's Lua side (`mp_rpc.lua`), as Kong 3.x and
 * lua-MessagePack make them. In process the same functions give module plugins the same shapes.
 */

/** A JS value as Lua holds it after MessagePack: bytes become strings, nils vanish from tables. */
export function toLua(v: unknown): unknown {
  if (v === null || v === undefined) return undefined
  if (typeof v !== 'object') return v
  // a Buffer (msgpack bin) unpacks to a Lua string
  if (v instanceof Uint8Array) return Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('utf8')
  if (Array.isArray(v)) {
    const out: unknown[] = []
    for (const x of v) {
      const lua = toLua(x)
      if (lua !== undefined) out.push(lua)
    }
    // [] and {} are one empty Lua table, which cjson encodes as {}
    return out.length === 0 ? {} : out
  }
  const out: Record<string, unknown> = {}
  for (const k of Object.keys(v)) {
    const lua = toLua((v as Record<string, unknown>)[k])
    if (lua !== undefined) out[k] = lua
  }
  return out
}

/**
 * A Lua value as the plugin receives it: an empty table is an empty array (lua-MessagePack packs
 * it as one), cjson.null inside a table arrives as null, a missing value as undefined.
 */
export function fromLua(v: unknown): unknown {
  if (v === undefined) return undefined
  if (v === null || typeof v !== 'object') return v
  if (Buffer.isBuffer(v)) return v.toString('utf8')
  if (Array.isArray(v)) {
    const out: unknown[] = []
    for (const x of v) if (x !== undefined) out.push(fromLua(x))
    return out
  }
  if (v instanceof Map) return fromLua(Object.fromEntries(v))
  const out: Record<string, unknown> = {}
  let empty = true
  for (const k of Object.keys(v)) {
    const x = (v as Record<string, unknown>)[k]
    if (x === undefined) continue
    out[k] = fromLua(x)
    empty = false
  }
  return empty ? [] : out
}

/**
 * Kong's `fix_mmap` for headers and query arguments: every value an array, a bare flag `[]`,
 * and an empty table a map (`{}`) rather than the empty array any other empty table becomes.
 */
export function fixMultiMap(v: unknown): unknown {
  if (v === undefined || v === null || typeof v !== 'object') return fromLua(v)
  const out: Record<string, unknown> = {}
  for (const k of Object.keys(v)) {
    const x = (v as Record<string, unknown>)[k]
    if (x === undefined) continue
    out[k] = x === true ? [] : typeof x === 'string' ? [x] : fromLua(x)
  }
  return out
}

/** Kong's `fix_raw` for raw bodies: sent as msgpack binary, so the plugin gets a Buffer. */
export function fixRaw(v: unknown): Buffer {
  if (Buffer.isBuffer(v)) return v
  // lua-MessagePack's binary packer takes the length of what it gets: nil fails the call
  if (typeof v !== 'string') throw new Error("attempt to get length of local 'str' (a nil value)")
  return Buffer.from(v, 'utf8')
}

/** The calls whose answer Kong reshapes (`must_fix` in mp_rpc.lua). */
export const MUST_FIX: Readonly<Record<string, (v: unknown) => unknown>> = {
  'kong.request.get_query': fixMultiMap,
  'kong.request.get_headers': fixMultiMap,
  'kong.response.get_headers': fixMultiMap,
  'kong.service.response.get_headers': fixMultiMap,
  'kong.request.get_raw_body': fixRaw,
  'kong.response.get_raw_body': fixRaw,
  'kong.service.response.get_raw_body': fixRaw,
}

/** The Step method Kong answers a call with (`get_step_method`); all others use plugin.Step. */
export const STEP_METHOD: Readonly<Record<string, string>> = {
  'kong.client.get_credential': 'plugin.StepCredential',
  'kong.client.load_consumer': 'plugin.StepConsumer',
  'kong.client.get_consumer': 'plugin.StepConsumer',
  'kong.client.authenticate': 'plugin.StepCredential',
  'kong.node.get_memory_stats': 'plugin.StepMemoryStats',
  'kong.router.get_route': 'plugin.StepRoute',
  'kong.router.get_service': 'plugin.StepService',
  'kong.request.get_query': 'plugin.StepMultiMap',
  'kong.request.get_headers': 'plugin.StepMultiMap',
  'kong.response.get_headers': 'plugin.StepMultiMap',
  'kong.service.response.get_headers': 'plugin.StepMultiMap',
}

/** cjson's encoding (it escapes "/"), for kong.log.serialize as external plugins receive it. */
export const cjsonEncode = (v: unknown): string => JSON.stringify(v).replace(/\//g, '\\/')
