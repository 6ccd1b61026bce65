import { describe, expect, it } from 'vitest'
import { ClearingMap } from './clearing-map.js'

describe('ClearingMap', () => {
  it('keeps values until it is full, then starts afresh with the new one', () => {
    const m = new ClearingMap<string, number>(2)
    m.set('a', 1)
    m.set('b', 2)
    expect([m.get('a'), m.get('b'), m.size]).toEqual([1, 2, 2])
    m.set('c', 3)
    expect([m.get('a'), m.get('b'), m.get('c'), m.size]).toEqual([undefined, undefined, 3, 1])
  })

  it('replaces a kept key without forgetting the others, even when full', () => {
    const m = new ClearingMap<string, number>(2)
    m.set('a', 1)
    m.set('b', 2)
    m.set('a', 10)
    expect([m.get('a'), m.get('b'), m.size]).toEqual([10, 2, 2])
  })

  it('never holds more than its maximum, whatever is fed to it', () => {
    const m = new ClearingMap<number, number>(100)
    for (let i = 0; i < 10_000; i++) {
      m.set(i, i)
      expect(m.size).toBeLessThanOrEqual(100)
    }
  })
})
