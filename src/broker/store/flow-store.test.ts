import { describe, expect, it, vi } from 'vitest'
import { bothStores, newEntry, SECRETS, testStore } from '../../../test/helpers/flow-store.js'
import { redisPeer } from '../../../test/helpers/redis-peer.js'
import { newId } from '../ids.js'
import type { FlowEntry } from './flow-store.js'
import { Sealer } from './seal.js'

// The flow store's own operations. How they go out (store.replicas, a failover's fence): io.test.ts;
// a claim or a move that does not count put back: undo.test.ts.
const redis = redisPeer()

// The same behaviour on a real Redis and on the embedded store (whose Lua runs elsewhere).
describe.each(bothStores(() => redis.client))('FlowStore on %s', (_label, makeStore) => {
  it('lends a device flow one poll at a time: running, then the interval, then free again', async () => {
    const store = makeStore()
    const hash = newId()
    expect(await store.takePollLease(hash, 5_000)).toEqual({ taken: true })
    const busy = await store.takePollLease(hash, 5_000)
    expect(busy).toMatchObject({ taken: false, running: true })
    await store.holdPollLease(hash, 150)
    const waiting = await store.takePollLease(hash, 5_000)
    expect(waiting).toMatchObject({ taken: false, running: false })
    expect(waiting.taken === false && waiting.leftMs).toBeLessThanOrEqual(150)
    await new Promise((r) => setTimeout(r, 200))
    expect(await store.takePollLease(hash, 5_000)).toEqual({ taken: true })
    // Named by a keyed digest, never by the hash.
    expect(await redis.client.keys(`*${hash}*`)).toEqual([])
  })

  it('keeps a device flow awaiting_user through compare-and-set', async () => {
    const store = makeStore()
    const e = { ...newEntry(), progress: 'awaiting_user' as const }
    await store.create(e)
    expect((await store.get(e.hash))?.progress).toBe('awaiting_user')
    expect(await store.advance('awaiting_user', { ...e, progress: 'completed' })).toBe('ok')
    expect(await store.advance('awaiting_user', { ...e, progress: 'completed' })).toBe('completed')
  })

  it('claims a one-shot flow once: the first claim sees stored, later ones started', async () => {
    const store = makeStore()
    const e = newEntry()
    await store.create(e)
    const first = await store.claim(e.hash)
    expect(first).toMatchObject({
      reusable: false,
      entry: { hash: e.hash, progress: 'stored', record: e.record, data: {} },
    })
    expect((await store.claim(e.hash))!.entry.progress).toBe('started')
    expect((await store.get(e.hash))!.progress).toBe('started')
  })

  it('knows no hash, code or callback id longer than 128 characters, whatever the store holds', async () => {
    const store = makeStore()
    const long = 'h'.repeat(129)
    await store.client.set(store.keys.result(long), '{"x":1}')
    await store.client.set(store.keys.callback(long), 'some-hash')
    expect(await store.get(long)).toBeUndefined()
    expect(await store.claim(long)).toBeUndefined()
    expect(await store.correlated(long)).toBeUndefined()
    expect(await store.takeResult(long)).toBeUndefined()
    expect(await store.client.exists(store.keys.result(long))).toBe(1)
  })

  it('claims a flow whose first step ran at /store straight to awaiting_callback, with its redirect', async () => {
    const store = makeStore()
    const e = { ...newEntry(), data: { state: 's', nonce: 'n' } }
    await store.create(e, { redirect: 'https://provider.example/authorize?state=s' })
    expect(await store.claim(e.hash)).toMatchObject({
      redirect: 'https://provider.example/authorize?state=s',
      entry: { progress: 'stored', data: { state: 's', nonce: 'n' } },
    })
    expect((await store.get(e.hash))!.progress).toBe('awaiting_callback')
    expect((await store.claim(e.hash))!.entry.progress).toBe('awaiting_callback')
  })

  it('never claims a reusable flow', async () => {
    const store = makeStore()
    const e = newEntry()
    await store.create(e, { reusable: true })
    expect(await store.claim(e.hash)).toMatchObject({ reusable: true, entry: { progress: 'stored' } })
    expect((await store.claim(e.hash))!.entry.progress).toBe('stored')
  })

  it('advances with data and error, and refuses a move from the wrong progress', async () => {
    const store = makeStore()
    const e = newEntry()
    await store.create(e)
    await store.claim(e.hash)
    expect(await store.advance('stored', { ...e, progress: 'awaiting_callback' })).toBe('started')
    expect(
      await store.advance('started', { ...e, progress: 'awaiting_callback', data: { state: 's', nonce: 'n' } }),
    ).toBe('ok')
    expect(
      await store.advance('awaiting_callback', {
        ...e,
        progress: 'failed',
        data: { state: 's' },
        error: { code: 'FAILED', error: 'server_error', description: 'y' },
      }),
    ).toBe('ok')
    const got = (await store.get(e.hash))!
    expect(got).toMatchObject({
      progress: 'failed',
      data: { state: 's' },
      error: { code: 'FAILED', error: 'server_error', description: 'y' },
      record: e.record,
    })
    // Claimed: the flow lives store.callbackWait from then on, whatever the body was written with.
    expect(got.expiresAt).toBeGreaterThan(Date.now() + 590_000)
  })

  it('keeps unicode, line breaks in values and the expiry through every step', async () => {
    const store = makeStore()
    const e = { ...newEntry(), record: { auth_type: 'oauth', client_id: 'c', scope: 'é 😀 ü\nline\r\n"q"\\' } }
    await store.create(e, { redirect: 'https://p.example/a?scope=%C3%A9' })
    await store.claim(e.hash)
    expect(await store.advance('awaiting_callback', { ...e, progress: 'completed', data: { note: 'ß\n😀' } })).toBe(
      'ok',
    )
    const got = (await store.get(e.hash))!
    expect(got).toMatchObject({ progress: 'completed', record: e.record, data: { note: 'ß\n😀' } })
    const ttl = await store.client.pttl(store.flowKey(e.hash))
    expect(ttl).toBeGreaterThan(590_000)
    expect(ttl).toBeLessThanOrEqual(600_000)
  })

  it('the move to exchanging and its renewals rewrite the header alone: the sealed body stays, the lease reads back', async () => {
    const store = makeStore()
    const e = { ...newEntry(), data: { state: 's', verifier: 'v' } }
    await store.create(e, { redirect: 'https://p.example/a' })
    await store.claim(e.hash)
    const key = store.flowKey(e.hash)
    const body = (v: string | null) => v!.slice(17)
    const before = await store.client.get(key)
    const lease = Date.now() + 3000
    // The move names other data: it is not written (a move to exchanging changes where the flow stands only).
    const moved = { ...e, progress: 'exchanging' as const, leaseUntil: lease, data: { other: 'x' } }
    expect(await store.advance('awaiting_callback', moved)).toBe('ok')
    const after = await store.client.get(key)
    expect(body(after)).toBe(body(before))
    expect(after!.slice(0, 4)).toBe('3x00')
    expect(await store.get(e.hash)).toMatchObject({ progress: 'exchanging', leaseUntil: lease, data: e.data })
    // A renewal: the lease moves, the body still does not.
    expect(await store.advance('exchanging', { ...moved, leaseUntil: lease + 250 })).toBe('ok')
    expect(body(await store.client.get(key))).toBe(body(before))
    expect((await store.get(e.hash))?.leaseUntil).toBe(lease + 250)
    // The end of the exchange writes its data, sealed anew, and no lease.
    expect(await store.advance('exchanging', { ...e, progress: 'completed', data: { done: true } })).toBe('ok')
    expect(body(await store.client.get(key))).not.toBe(body(before))
    const done = (await store.get(e.hash))!
    expect(done).toMatchObject({ progress: 'completed', data: { done: true } })
    expect(done.leaseUntil).toBeUndefined()
    // The prepared redirect kept in the body is not handed out again once its flag is cleared.
    expect((await store.claim(e.hash))?.redirect).toBeUndefined()
  })

  it('an unstarted flow lives store.expire; once /start claims it, store.callbackWait (a slow login)', async () => {
    const store = makeStore()
    const [plain, prepared, reusable] = [newEntry(), { ...newEntry(), data: { state: 's' } }, newEntry()]
    await store.create(plain)
    await store.create(prepared, { redirect: 'https://p.example/authorize?state=s' })
    await store.create(reusable, { reusable: true })
    const ttl = (e: FlowEntry) => store.client.pttl(store.flowKey(e.hash))
    expect(await ttl(plain)).toBeLessThanOrEqual(60_000)
    const claimed = (await store.claim(plain.hash))!
    expect(claimed.entry.expiresAt).toBeGreaterThan(Date.now() + 590_000)
    await store.claim(prepared.hash)
    await store.claim(reusable.hash)
    for (const e of [plain, prepared]) {
      expect(await ttl(e)).toBeGreaterThan(590_000)
      // The prepared flow's sealed body still says store.expire: what is read follows the key.
      expect((await store.get(e.hash))!.expiresAt).toBeGreaterThan(Date.now() + 590_000)
    }
    // A signing helper's record is not waiting for anyone: it keeps its store.expire.
    expect(await ttl(reusable)).toBeLessThanOrEqual(60_000)
    // A second claim of a started flow does not extend it again.
    await store.client.pexpire(store.flowKey(plain.hash), 5_000)
    await store.claim(plain.hash)
    expect(await ttl(plain)).toBeLessThanOrEqual(5_000)
  })

  it('keeps a prepared redirect whatever characters it holds (the body is sealed, not split)', async () => {
    const store = makeStore()
    const e = newEntry()
    await store.create(e, { redirect: 'https://p.example/\nx' })
    expect((await store.claim(e.hash))!.redirect).toBe('https://p.example/\nx')
  })

  it('takes a flow kept in clear by the previous version (progress first, raw JSON) for a gone one', async () => {
    const store = makeStore()
    const e = newEntry()
    await store.client.set(store.flowKey(e.hash), `s0${JSON.stringify(e)}\n\n{}\n`)
    expect(await store.get(e.hash)).toBeUndefined()
    expect(await store.claim(e.hash)).toBeUndefined()
    expect(await store.advance('stored', e)).toBe('gone')
  })

  it('opens nothing that was altered or moved under another key', async () => {
    const store = makeStore()
    const [a, b] = [newEntry(), newEntry()]
    await store.create(a)
    await store.create(b)
    const value = (await store.client.get(store.flowKey(a.hash)))!
    // a's sealed value under b's name: the key name is the associated data.
    await store.client.set(store.flowKey(b.hash), value)
    expect(await store.get(b.hash)).toBeUndefined()
    // One character of a's body changed.
    const flipped = value.slice(0, -5) + (value.at(-5) === 'A' ? 'B' : 'A') + value.slice(-4)
    await store.client.set(store.flowKey(a.hash), flipped)
    expect(await store.get(a.hash)).toBeUndefined()
  })

  it('keeps neither a capability nor a secret readable: key names are digests, values sealed', async () => {
    const store = makeStore()
    await store.client.flushdb()
    const e = {
      ...newEntry(),
      record: { auth_type: 'oauth', client_id: 'c', client_secret: 'TOP-SECRET-VALUE' },
      data: { verifier: 'PKCE-VERIFIER-VALUE' },
    }
    await store.create(e, { redirect: 'https://p.example/a?state=STATE-VALUE' })
    await store.correlate('REQUEST-TOKEN-VALUE', e.hash, e.expiresAt)
    const code = newId()
    await store.putResult(code, { access_token: 'ACCESS-TOKEN-VALUE' })
    const dump: string[] = []
    for (const key of await store.client.keys('*')) dump.push(key, (await store.client.get(key)) ?? '')
    const text = dump.join('\n')
    for (const secret of [
      e.hash,
      code,
      'TOP-SECRET',
      'PKCE-VERIFIER',
      'STATE-VALUE',
      'REQUEST-TOKEN',
      'ACCESS-TOKEN',
      'oauth_2_3',
    ]) {
      expect(text).not.toContain(secret)
    }
    expect(await store.correlated('REQUEST-TOKEN-VALUE')).toBe(e.hash)
    expect(await store.takeResult(code)).toEqual({ access_token: 'ACCESS-TOKEN-VALUE' })
  })

  it('rotates its secrets without losing flows in flight: the first seals, every one opens', async () => {
    const old = makeStore()
    const client = old.client
    const e = newEntry()
    await old.create(e)
    await old.correlate('rt', e.hash, e.expiresAt)
    const code = newId()
    await old.putResult(code, { x: 1 })
    const rotated = testStore(client, { secrets: ['a new secret, first in the list, 32 chars+', ...SECRETS] })
    const claimed = (await rotated.claim(e.hash))!
    expect(claimed.entry).toMatchObject({ hash: e.hash, progress: 'stored', generation: 1 })
    expect(await rotated.advance('started', { ...claimed.entry, progress: 'awaiting_callback', data: { n: 1 } })).toBe(
      'ok',
    )
    expect(await rotated.get(e.hash)).toMatchObject({ progress: 'awaiting_callback', data: { n: 1 } })
    expect(await rotated.correlated('rt')).toBe(e.hash)
    expect(await rotated.takeResult(code)).toEqual({ x: 1 })
    // A new flow is sealed with the new secret only: the old store alone cannot find it.
    const fresh = newEntry()
    await rotated.create(fresh)
    expect(await rotated.get(fresh.hash)).toMatchObject({ hash: fresh.hash })
    expect(await old.get(fresh.hash)).toBeUndefined()
  })

  it("derives a flow's key once for a read and the writes after it (a /callback's two transitions)", async () => {
    const store = makeStore()
    const e = newEntry()
    await store.create(e)
    const derive = vi.spyOn(Sealer.prototype, 'derive')
    try {
      const got = (await store.get(e.hash))!
      const exchanging = { ...got, progress: 'exchanging' as const, leaseUntil: Date.now() + 1000 }
      expect(await store.advance('stored', exchanging)).toBe('ok')
      expect(await store.advance('exchanging', { ...exchanging, progress: 'completed', data: { t: 1 } })).toBe('ok')
      expect(derive.mock.calls.filter(([kind]) => kind === 'flow')).toHaveLength(1)
    } finally {
      derive.mockRestore()
    }
    expect(await store.get(e.hash)).toMatchObject({ progress: 'completed', data: { t: 1 } })
  })

  it('knows nothing of an unknown hash', async () => {
    const store = makeStore()
    expect(await store.get('nope')).toBeUndefined()
    expect(await store.claim('nope')).toBeUndefined()
    expect(await store.advance('stored', { ...newEntry(), hash: 'nope' })).toBe('gone')
  })
})
