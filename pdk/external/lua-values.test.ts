import { describe, expect, it } from 'vitest'
import { kongConfig, WORKSPACE_ID } from './config.js'
import { fixMultiMap, fixRaw, fromLua, toLua } from './lua-values.js'

describe('values crossing Lua', () => {
  it('to Lua: bytes become strings, nils leave tables, [] and {} are one empty table', () => {
    expect(toLua(Buffer.from('héllo'))).toBe('héllo')
    expect(toLua({ a: null, b: undefined, c: [1, null, 2], d: [], e: {} })).toEqual({ c: [1, 2], d: {}, e: {} })
    expect(toLua(null)).toBeUndefined()
  })

  it('from Lua: an empty table is an empty array, cjson.null stays null inside a table', () => {
    expect(fromLua({})).toEqual([])
    expect(fromLua({ a: {}, b: null, c: undefined })).toEqual({ a: [], b: null })
    expect(fromLua(undefined)).toBeUndefined()
  })

  it("multi-maps as Kong's fix_mmap makes them; raw bodies as binary", () => {
    expect(fixMultiMap({ flag: true, one: 'x', many: ['a', 'b'] })).toEqual({ flag: [], one: ['x'], many: ['a', 'b'] })
    expect(fixMultiMap({})).toEqual({})
    expect(fixRaw('body')).toEqual(Buffer.from('body'))
    expect(() => fixRaw(undefined)).toThrow("attempt to get length of local 'str' (a nil value)")
  })
})

describe('the configuration Kong sends StartInstance', () => {
  it("fills the schema's fields (default, else null) and adds Kong's keys", () => {
    const schema = [{ message: { type: 'string' } }, { n: { type: 'number', default: 3 } }]
    const cfg = JSON.parse(kongConfig('hello', 'id-1', schema, { extra: true }, 2)) as Record<string, unknown>
    expect(cfg).toEqual({
      extra: true,
      message: null,
      n: 3,
      __plugin_id: 'id-1',
      __ws_id: WORKSPACE_ID,
      __key__: `plugins:hello:::::${WORKSPACE_ID}`,
      __seq__: 2,
    })
  })
})
