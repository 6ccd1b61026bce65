import { afterAll, describe, expect, it } from 'vitest'
import { createVm } from './engine.js'
import { dropLuajitLiterals } from './luajit-syntax.js'

const vm = await createVm({ heapLimit: 16 * 1024 * 1024 })
afterAll(() => vm.close())
const run = (src: string) => vm.run(dropLuajitLiterals(Buffer.from(src)), '=luajit')

describe("LuaJIT's 64-bit integer literals", () => {
  it('load as 64-bit integers, as lua-resty-kafka writes them', () => {
    expect(run('local a, b, c = 4294967296LL, 0xffULL, 2ll return a * 2, b + 1, math.type(c)')).toEqual([
      8589934592,
      256,
      'integer',
    ])
  })

  it('are left alone in strings, comments and names', () => {
    const src = 'local s = "1LL" -- 2LL\nlocal t = [[3ULL]] --[==[ 4LL ]==]\nlocal x1LL = 5 return s, t, x1LL'
    expect(dropLuajitLiterals(Buffer.from(src)).toString()).toBe(src)
    expect(run(src)).toEqual(['1LL', '3ULL', 5])
  })

  it('fail to load without the rewrite (the test can fail)', () => {
    expect(() => vm.run('return 4294967296LL', '=plain')).toThrow(/malformed number/)
  })
})
