import { describe, expect, it } from 'vitest'
import { newId, newState, safeEqual, sign, unsign } from './ids.js'

describe('ids', () => {
  it('makes URL-safe ids with at least 128 bits', () => {
    const id = newId()
    expect(id).toMatch(/^[A-Za-z0-9_-]+$/)
    expect(Buffer.from(id, 'base64url').length * 8).toBeGreaterThanOrEqual(128)
    expect(new Set(Array.from({ length: 1000 }, newId)).size).toBe(1000)
  })

  it('signs and refuses tampered values', () => {
    const s = sign('abc', 'k'.repeat(16))
    expect(unsign(s, 'k'.repeat(16))).toBe('abc')
    expect(unsign(s.replace('abc', 'abd'), 'k'.repeat(16))).toBeUndefined()
    expect(unsign(s, 'x'.repeat(16))).toBeUndefined()
    expect(unsign(newState('k'.repeat(16)), 'k'.repeat(16))).toBeTruthy()
  })

  it('compares safely', () => {
    expect(safeEqual('a', 'a')).toBe(true)
    expect(safeEqual('a', 'ab')).toBe(false)
  })
})
