import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { LIB_DIR } from './modules.js'
import { createVm } from './engine.js'

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

  it("words a syntax error at the end of a chunk as LuaJIT does (near '<eof>')", () => {
    expect(lua(`return select(2, load("print(")), select(2, loadstring("x =", "=f")), load("return 1")()`)).toEqual([
      `[string "print("]:1: unexpected symbol near '<eof>'`,
      `f:1: unexpected symbol near '<eof>'`,
      1,
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

  it("has the whole bit module with LuaBitOp's 32-bit signed results", () => {
    expect(
      lua(`return bit.tohex(bit.bswap(0x12345678)), bit.arshift(-256, 8), bit.rshift(-256, 8), bit.lshift(1, 31),
        bit.tohex(bit.rol(0x12345678, 12)), bit.tohex(bit.ror(0x12345678, 12)), bit.bnot(0), bit.bxor(7, 2, 1),
        bit.bor(1, 2, 4), bit.tohex(-1, -4), bit.tohex(255, 2), bit.tobit(2^32 + 5)`),
    ).toEqual(['78563412', -1, 16777215, -2147483648, '45678123', '67812345', -1, 4, 7, 'FFFF', 'ff', 5])
  })

  it("has LuaJIT's table extensions as fields and modules, table.maxn and math.frexp", () => {
    expect(
      lua(`return table.isarray({ 1, 2, 3 }), table.isarray({ 1, nil, 3 }), table.isarray({ a = 1 }), table.isarray({}),
        table.nkeys({ 1, a = 2 }), table.isempty({}), require("table.clone")({ 5 })[1], table.maxn({ [1] = 1, [10] = 2 }),
        math.frexp(8)`),
    ).toEqual([true, false, false, true, 2, true, 5, 10, 0.5, 4])
  })

  it('gives math.fmod by zero nan as LuaJIT does (C fmod), and jit as a global', () => {
    expect(lua('local n = math.fmod(5, 0) return n ~= n, math.fmod(-5, 2), math.fmod(5.5, 2)')).toEqual([true, -1, 1.5])
    expect(lua('return jit ~= nil, jit == require("jit"), type(jit.version)')).toEqual([true, true, 'string'])
  })

  // Each difference docs/lua-plugins.md lists under "LuaJIT and Lua 5.4: what differs", shown.
  it('takes a float where an integer is expected, truncated toward zero, as LuaJIT does', () => {
    expect(
      lua(`local s = "abcdefgh"
           return s:sub(1.9, 3.2), s:byte(2.5), ("ab"):rep(2.7), (s:gsub(".", "x", 2.9)), s:find("c", 1.5),
             string.char(65.4, 66.9), table.concat({ "a", "b", "c" }, "", 1, 2.8), select(2, unpack({ 1, 2 }, 1.2, 2.1)),
             math.random(1.5) == 1`),
    ).toEqual(['abc', 98, 'abab', 'xxcdefgh', 3, 'AB', 'ab', 2, true])
  })

  describe('keeps the differences it cannot remove (documented in docs/lua-plugins.md)', () => {
    it('concatenation formats a whole float itself: LuaJIT gives "x5" and "5,3"', () => {
      expect(lua('return "x" .. 10/2, table.concat({ 10/2, 3 }, ",")')).toEqual(['x5.0', '5.0,3'])
    })

    it('integer modulo and division by zero raise where LuaJIT gives nan / inf', () => {
      expect(() => lua('return 5 % 0')).toThrow("attempt to perform 'n%0'")
      expect(() => lua('return 5 // 0')).toThrow('attempt to divide by zero')
    })

    it('integers are 64-bit: exact past 2^53 and wrapping at 2^63, where LuaJIT rounds to a double', () => {
      expect(lua('return 9007199254740993 - 9007199254740992, math.maxinteger + 1 == math.mininteger')).toEqual([
        1,
        true,
      ])
    })

    it('string.format("%q") writes a float in hexadecimal', () => {
      expect(lua('return string.format("%q", 0.5)')).toEqual(['0x1p-1'])
    })

    it('table.insert past the end of the array raises, where LuaJIT stores the value', () => {
      expect(() => lua('local t = { 1, 2 } table.insert(t, 5, 9)')).toThrow('position out of bounds')
    })

    it("Lua 5.4's syntax parses: goto (LuaJIT has it too), //, bitwise operators", () => {
      expect(lua('for i = 1, 3 do if i == 2 then goto out end end ::out:: return 7 // 2, 5 & 3, 1 << 4')).toEqual([
        3, 1, 16,
      ])
    })

    it("the bare VM has no filesystem (broker.io gives plugins the host's), and os.getenv reads the VM's own environment", () => {
      expect(lua('return io.open("/etc/hostname")')).toEqual([
        undefined,
        '/etc/hostname: No such file or directory',
        44,
      ])
      expect(lua('return os.getenv("HOME")')).toEqual(['/home/web_user'])
    })

    it('there is no shell: os.execute runs nothing and answers as sh does for a command it cannot find', () => {
      // Penlight's utils.executeex (Kong's kong.tools.system, loaded by kong.reports) then reports a failure
      expect(lua('return os.execute()')).toEqual([false])
      expect(lua('return os.execute("uname -ms")')).toEqual([undefined, 'exit', 127])
      expect(lua('return pcall(io.popen, "uname")')).toEqual([false, "'popen' not supported"])
    })
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
