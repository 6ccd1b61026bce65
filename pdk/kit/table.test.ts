import { describe, expect, it } from 'vitest'
import { kitFor } from '../runner/harness.js'

describe('table', () => {
  it('clear empties a table in place, list or map', () => {
    const { kit } = kitFor()
    const map: Record<string, unknown> = { hello: 'world' }
    const list = ['foo', 'bar']
    kit.table.clear(map)
    kit.table.clear(list)
    expect(map).toEqual({})
    expect(list).toEqual([])
    expect(() => kit.table.clear('x')).toThrow("bad argument #1 to 'clear' (table expected)")
  })

  it('merge puts the second table over the first, lists position by position', () => {
    const { kit } = kitFor()
    const a = { x: 'hello' }
    expect(kit.table.merge(a, { x: 'world', y: 1 })).toEqual({ x: 'world', y: 1 })
    expect(a).toEqual({ x: 'hello' })
    expect(kit.table.merge([1, 2, 3, 4, 5], [6, 7, 8])).toEqual([6, 7, 8, 4, 5])
  })
})
