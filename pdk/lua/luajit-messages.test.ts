import { describe, expect, it } from 'vitest'
import { luajitWording } from './luajit-messages.js'
import { createVm } from './engine.js'

describe("a type error in LuaJIT's words", () => {
  it('rewords what Lua 5.4 raises for a call, an index and arithmetic, and leaves other messages alone', async () => {
    const vm = await createVm({ heapLimit: 16 * 1024 * 1024 })
    const raised = (code: string) => {
      try {
        vm.run(code, '=TMP')
      } catch (e) {
        return luajitWording(e instanceof Error ? e.message : String(e)).split('\n')[0]
      }
      return 'no error'
    }
    try {
      expect(raised('foo()')).toBe("TMP:1: attempt to call global 'foo' (a nil value)")
      expect(raised('local t = {} t.x.y = 1')).toBe("TMP:1: attempt to index field 'x' (a nil value)")
      expect(raised('local s = nil; return s.x')).toBe("TMP:1: attempt to index local 's' (a nil value)")
      expect(raised('return string.x + 1')).toBe("TMP:1: attempt to perform arithmetic on field 'x' (a nil value)")
      expect(raised('error("attempt to call a nil value, said the plugin")')).toBe(
        'TMP:1: attempt to call a nil value, said the plugin',
      )
    } finally {
      vm.close()
    }
  })
})
