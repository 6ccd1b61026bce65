import { afterAll, describe, expect, it } from 'vitest'
import { createVm } from './engine.js'
import { LuaError } from './vm.js'

// The VM's own guarantees, whatever engine sits behind vm.ts: a bounded heap, a deadline, bytes intact.
const vm = await createVm({ heapLimit: 8 * 1024 * 1024 })
afterAll(() => vm.close())

describe('the Lua VM', () => {
  it('refuses to grow its heap past the limit, and keeps working after', () => {
    expect(() => vm.run('local t = {} for i = 1, 1e7 do t[i] = ("x"):rep(64) .. i end', '=heap')).toThrow(
      /not enough memory/,
    )
    vm.run('collectgarbage()', '=gc')
    expect(vm.heapUsed()).toBeLessThan(8 * 1024 * 1024)
    expect(vm.heapUsed()).toBeGreaterThan(0)
    expect(vm.run('return 1 + 1', '=after')).toEqual([2])
  })

  it('stops Lua past its deadline with the message given, and runs again once lifted', () => {
    vm.setDeadline(performance.now() + 20, 'too slow')
    try {
      expect(() => vm.run('while true do end', '=loop')).toThrow(LuaError)
      expect(() => vm.run('while true do end', '=loop')).toThrow(/too slow/)
    } finally {
      vm.setDeadline(undefined)
    }
    expect(vm.run('local n = 0 for i = 1, 1e5 do n = n + i end return n', '=sum')).toEqual([5000050000])
  })

  it('moves bytes that are not UTF-8 both ways unchanged', () => {
    const bytes = Buffer.from([0, 0xff, 0xfe, 10, 0])
    vm.register('echo', (...a) => a)
    vm.run('function roundtrip(b) return echo(b), #b end', '=rt')
    expect(vm.call('roundtrip', bytes)).toEqual([bytes, 5])
  })
})
