import { createHmac } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { hashOfState, newFlowIds, newId, safeEqual } from './ids.js'

describe('ids', () => {
  it('makes URL-safe ids with at least 128 bits', () => {
    const id = newId()
    expect(id).toMatch(/^[A-Za-z0-9_-]+$/)
    expect(Buffer.from(id, 'base64url').length * 8).toBeGreaterThanOrEqual(128)
    expect(new Set(Array.from({ length: 1000 }, newId)).size).toBe(1000)
  })

  it('makes a random state whose flow hash only the same secret derives', () => {
    const secret = 'k'.repeat(16)
    const a = newFlowIds(secret)
    const b = newFlowIds(secret)
    expect(a.state).toMatch(/^[A-Za-z0-9_-]{32}$/)
    expect(a.hash).toMatch(/^[A-Za-z0-9_-]{32}$/)
    expect(new Set([a.state, b.state, a.hash, b.hash]).size).toBe(4)
    expect(hashOfState(a.state, secret)).toBe(a.hash)
    expect(hashOfState(b.state, secret)).toBe(b.hash)
    // Another secret, or any change to the state, names another (unknown) flow.
    expect(hashOfState(a.state, 'x'.repeat(16))).not.toBe(a.hash)
    const bytes = Buffer.from(a.state, 'base64url')
    bytes[5] = bytes[5]! ^ 1
    expect(hashOfState(bytes.toString('base64url'), secret)).not.toBe(a.hash)
    expect(hashOfState('', secret)).toBeUndefined()
    expect(hashOfState('not a state!', secret)).toBeUndefined()
    expect(hashOfState(`${a.state}x`, secret)).toBeUndefined()
  })

  it('derives the hash as documented, so that flows survive a restart or another version', () => {
    const secret = 'k'.repeat(16)
    const { hash, state } = newFlowIds(secret)
    const full = createHmac('sha256', secret).update('broker state\0').update(Buffer.from(state, 'base64url')).digest()
    expect(hash).toBe(full.subarray(0, 24).toString('base64url'))
  })

  it('compares safely', () => {
    expect(safeEqual('a', 'a')).toBe(true)
    expect(safeEqual('a', 'ab')).toBe(false)
  })
})
