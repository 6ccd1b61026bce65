import { describe, expect, it } from 'vitest'
import { newId, openState, safeEqual, sealState, sign, unsign } from './ids.js'

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
  })

  it('seals a flow hash into a state only the same secret opens, different every time', () => {
    const secret = 'k'.repeat(16)
    const hash = newId()
    const a = sealState(hash, secret)
    const b = sealState(hash, secret)
    expect(a).toMatch(/^[A-Za-z0-9_-]+$/)
    expect(a).not.toBe(b)
    expect(a).not.toContain(hash)
    expect(openState(a, secret)).toBe(hash)
    expect(openState(b, secret)).toBe(hash)
    // Another secret, or any change to the state, names another (unknown) flow.
    expect(openState(a, 'x'.repeat(16))).not.toBe(hash)
    const bytes = Buffer.from(a, 'base64url')
    bytes[20] = bytes[20]! ^ 1
    expect(openState(bytes.toString('base64url'), secret)).not.toBe(hash)
    expect(openState('', secret)).toBeUndefined()
    expect(openState('not a state!', secret)).toBeUndefined()
    expect(openState(`${a}x`, secret)).toBeUndefined()
  })

  it('compares safely', () => {
    expect(safeEqual('a', 'a')).toBe(true)
    expect(safeEqual('a', 'ab')).toBe(false)
  })
})
