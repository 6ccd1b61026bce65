import { describe, expect, it } from 'vitest'
import { BoundedCache } from './bounded-cache.js'

describe('BoundedCache', () => {
  it('keeps a fresh entry against any number of newcomers; an expired one makes room', () => {
    const cache = new BoundedCache<number>(2)
    const t = 1_000_000
    expect(cache.set('victim', 1, 600, t)).toBe(true)
    expect(cache.set('a', 2, 10, t)).toBe(true)
    // Full of fresh entries: a newcomer is not kept, nobody is evicted.
    for (let i = 0; i < 300; i++) expect(cache.set(`x${i}`, i, 600, t + 1)).toBe(false)
    expect(cache.get('victim', t + 1)).toBe(1)
    // 'a' has expired: it makes room for the next newcomer.
    expect(cache.set('b', 3, 600, t + 20)).toBe(true)
    expect(cache.get('a', t + 20)).toBeUndefined()
    expect(cache.get('b', t + 20)).toBe(3)
    expect(cache.get('victim', t + 20)).toBe(1)
    // Replacing a kept key needs no room.
    expect(cache.set('victim', 4, 600, t + 30)).toBe(true)
    expect(cache.get('victim', t + 30)).toBe(4)
    expect(cache.get('victim', t + 700)).toBeUndefined()
  })
})
