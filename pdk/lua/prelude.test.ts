import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { LIB_DIR } from './modules.js'
import { createVm } from './vm.js'

const vm = await createVm({ heapLimit: 32 * 1024 * 1024 })
vm.run(readFileSync(join(LIB_DIR, 'broker', 'prelude.lua')), '@broker/prelude.lua')
afterAll(() => vm.close())
const lua = (code: string) => vm.run(code, '=test')

describe('the LuaJIT / 5.1 compatibility prelude', () => {
  it('prints whole floats as LuaJIT does, and truncates %d', () => {
    expect(lua('return tostring(10/2), string.format("%d|%s", 3.7, 2.0), tostring(2^53)')).toEqual([
      '5',
      '3|2',
      '9.007199254741e+15',
    ])
  })

  it('has unpack, loadstring, setfenv/getfenv, bit, math.pow, table.getn', () => {
    expect(
      lua(`
        local f = loadstring("return x")
        setfenv(f, { x = 42 })
        return select(2, unpack({ 1, 2 })), f(), getfenv(f).x, bit.band(0xff, 0x0f), bit.tobit(0xffffffff),
          math.pow(2, 10), table.getn({ 1, 2, 3 })`),
    ).toEqual([2, 42, 42, 15, -1, 1024, 3])
  })

  it('keeps the differences it cannot remove (documented in docs/lua-plugins.md)', () => {
    // concatenation formats a float itself: LuaJIT gives "x5"
    expect(lua('return "x" .. 10/2')).toEqual(['x5.0'])
    // integer modulo by zero raises where LuaJIT gives nan
    expect(() => lua('return 5 % 0')).toThrow("attempt to perform 'n%0'")
  })

  it('moves bytes both ways unchanged (NUL, invalid UTF-8)', () => {
    const bytes = Buffer.from([0x61, 0x00, 0xff, 0xfe])
    vm.register('echo', (...a) => a)
    lua('function lens(s) return #echo(s), echo(s) end')
    const [len, out] = vm.call('lens', bytes)
    expect(len).toBe(4)
    expect(Buffer.isBuffer(out) && out.equals(bytes)).toBe(true)
  })
})
