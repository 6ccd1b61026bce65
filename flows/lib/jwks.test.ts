import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { ecKey as ec } from '../../test/helpers/hand-made-oidc.js'
import {
  jwksProvider as provider,
  signEs256 as sign,
  uniqueJwksUri as uniqueUri,
} from '../../test/helpers/jwks-http.js'
import type { HttpAnswer } from '../contract.js'
import { verifySigned } from './jwks.js'

// The provider key sets as verifySigned keeps them: one per jwks_uri, refetched for an unknown kid
// at most once a second, kept 10 minutes, never flushed by someone reading many others, and every
// fetch made through the http of the flow that needs it (the broker's outbound policy).

const verify = (jwt: string, uri: string, http: (url: string) => Promise<HttpAnswer>) =>
  verifySigned(jwt, uri, http, {})

describe('the provider key sets (JWKS)', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['Date'] })
  })
  afterEach(() => {
    vi.useRealTimers()
  })

  it('reads a jwks_uri once and keeps its set 10 minutes', async () => {
    const k1 = ec()
    const op = provider(new Map([['k1', k1]]))
    const uri = uniqueUri()
    const jwt = await sign(k1, 'k1')
    expect((await verify(jwt, uri, op.http)).sub).toBe('alice')
    await verify(jwt, uri, op.http)
    expect(op.fetched).toEqual([uri])
    vi.setSystemTime(Date.now() + 10 * 60_000 + 1)
    await verify(await sign(k1, 'k1'), uri, op.http)
    expect(op.fetched).toHaveLength(2)
  })

  it('keeps each jwks_uri its own set: a key of one never verifies a token checked against another', async () => {
    const [ka, kb] = [ec(), ec()]
    const a = provider(new Map([['k1', ka]]))
    const b = provider(new Map([['k1', kb]]))
    const [uriA, uriB] = [uniqueUri(), uniqueUri()]
    await verify(await sign(ka, 'k1'), uriA, a.http)
    await verify(await sign(kb, 'k1'), uriB, b.http)
    // Same kid, A's key: against B's set it does not verify.
    await expect(verify(await sign(ka, 'k1'), uriB, b.http)).rejects.toThrow(/signature/)
  })

  it('refetches once for an unknown kid (a rotation), at most once a second', async () => {
    const keys = new Map([['k1', ec()]])
    const op = provider(keys)
    const uri = uniqueUri()
    await verify(await sign(keys.get('k1')!, 'k1'), uri, op.http)
    vi.setSystemTime(Date.now() + 1_001)
    const k2 = ec()
    keys.set('k2', k2)
    expect((await verify(await sign(k2, 'k2'), uri, op.http)).sub).toBe('alice')
    expect(op.fetched).toHaveLength(2)
    // Another unknown kid within the second: no fetch, no key.
    const k3 = ec()
    keys.set('k3', k3)
    await expect(verify(await sign(k3, 'k3'), uri, op.http)).rejects.toThrow()
    expect(op.fetched).toHaveLength(2)
    // A token whose kid nobody publishes, a second later: one fetch, then the refusal.
    vi.setSystemTime(Date.now() + 1_001)
    await expect(verify(await sign(ec(), 'nobody'), uri, op.http)).rejects.toThrow()
    expect(op.fetched).toHaveLength(3)
    // …and that fetch brought k3.
    expect((await verify(await sign(k3, 'k3'), uri, op.http)).sub).toBe('alice')
    expect(op.fetched).toHaveLength(3)
  })

  it('is not flushed by someone making it read 300 other key sets (no eviction of a fresh entry)', async () => {
    const k1 = ec()
    const op = provider(new Map([['k1', k1]]))
    const uri = uniqueUri()
    const jwt = await sign(k1, 'k1')
    await verify(jwt, uri, op.http)
    for (let i = 0; i < 300; i++) await verify(jwt, uniqueUri(), op.http)
    op.fetched.length = 0
    await verify(jwt, uri, op.http)
    expect(op.fetched).toEqual([])
  })

  it('fetches through the http of the flow that needs the keys, even for a set another flow read first', async () => {
    const keys = new Map([['k1', ec()]])
    const first = provider(keys)
    const second = provider(keys)
    const uri = uniqueUri()
    await verify(await sign(keys.get('k1')!, 'k1'), uri, first.http)
    vi.setSystemTime(Date.now() + 1_001)
    const k2 = ec()
    keys.set('k2', k2)
    await verify(await sign(k2, 'k2'), uri, second.http)
    expect(first.fetched).toHaveLength(1)
    expect(second.fetched).toEqual([uri])
  })

  it('names the jwks_uri when it answers no key set, and refuses an answer past the JSON bounds', async () => {
    const uri = uniqueUri()
    const jwt = await sign(ec(), 'k1')
    const answer = (status: number, body: string) => async (): Promise<HttpAnswer> => ({ status, headers: {}, body })
    await expect(verify(jwt, uri, answer(500, 'oops'))).rejects.toThrow(`The provider's JWKS at ${uri} answered 500`)
    await expect(verify(jwt, uri, answer(200, '{"nokeys":1}'))).rejects.toThrow(`JWKS at ${uri}`)
    await expect(verify(jwt, uri, answer(200, '['.repeat(100)))).rejects.toThrow(/nests deeper than 32/)
  })
})
