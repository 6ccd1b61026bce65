import type { Socket } from 'node:net'
import { Redis } from 'ioredis'
import RedisMock from 'ioredis-mock'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { startFaultProxy } from '../../../test/helpers/fault-proxy.js'
import { type RedisServer, startRedis } from '../../../test/helpers/redis.js'
import { configSchema } from '../../config/schema.js'
import { newId } from '../ids.js'
import { connectStore } from './connect.js'
import { type FlowEntry, FlowStore } from './flow-store.js'
import { Sealer } from './seal.js'

const SECRETS = ['a store secret of at least thirty-two characters']
let redis: RedisServer
let client: Redis

beforeAll(async () => {
  redis = await startRedis()
  client = new Redis({ port: redis.port })
})
afterAll(async () => {
  client?.disconnect()
  await redis?.stop()
})

const entry = (): FlowEntry => {
  const now = Date.now()
  return {
    hash: newId(),
    plugin: 'oauth_2_3-legged',
    record: { auth_type: 'oauth', client_id: 'c' },
    progress: 'stored',
    createdAt: now,
    expiresAt: now + 60_000,
    data: {},
  }
}

// The same behaviour on a real Redis and on the embedded store (whose Lua runs elsewhere).
describe.each([
  ['real Redis', () => new FlowStore(client, { expireSeconds: 60, callbackWaitSeconds: 600, secrets: SECRETS })],
  [
    'embedded store',
    () =>
      new FlowStore(new RedisMock() as unknown as Redis, {
        expireSeconds: 60,
        callbackWaitSeconds: 600,
        secrets: SECRETS,
      }),
  ],
])('FlowStore on %s', (_label, makeStore) => {
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
    expect(await client.keys(`*${hash}*`)).toEqual([])
  })

  it('keeps a device flow awaiting_user through compare-and-set', async () => {
    const store = makeStore()
    const e = { ...entry(), progress: 'awaiting_user' as const }
    await store.create(e)
    expect((await store.get(e.hash))?.progress).toBe('awaiting_user')
    expect(await store.advance('awaiting_user', { ...e, progress: 'completed' })).toBe('ok')
    expect(await store.advance('awaiting_user', { ...e, progress: 'completed' })).toBe('completed')
  })

  it('claims a one-shot flow once: the first claim sees stored, later ones started', async () => {
    const store = makeStore()
    const e = entry()
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
    const e = { ...entry(), data: { state: 's', nonce: 'n' } }
    await store.create(e, { redirect: 'https://provider.example/authorize?state=s' })
    expect(await store.claim(e.hash)).toMatchObject({
      redirect: 'https://provider.example/authorize?state=s',
      entry: { progress: 'stored', data: { state: 's', nonce: 'n' } },
    })
    expect((await store.get(e.hash))!.progress).toBe('awaiting_callback')
    expect((await store.claim(e.hash))!.entry.progress).toBe('awaiting_callback')
  })

  it('unstart puts a flow its claim (and first step) moved back as /store left it, its store.expire with it', async () => {
    const store = makeStore()
    const e = entry()
    await store.create(e)
    const before = await store.client.get(store.flowKey(e.hash))
    const claimed = (await store.claim(e.hash))!
    expect(await store.advance('started', { ...e, progress: 'awaiting_callback', data: { nonce: 'n' } })).toBe('ok')
    await store.unstart(claimed)
    expect(await store.client.get(store.flowKey(e.hash))).toBe(before)
    expect(await store.client.pttl(store.flowKey(e.hash))).toBeLessThanOrEqual(60_000)
    expect((await store.claim(e.hash))!.entry.progress).toBe('stored')
  })

  it('never claims a reusable flow', async () => {
    const store = makeStore()
    const e = entry()
    await store.create(e, { reusable: true })
    expect(await store.claim(e.hash)).toMatchObject({ reusable: true, entry: { progress: 'stored' } })
    expect((await store.claim(e.hash))!.entry.progress).toBe('stored')
  })

  it('advances with data and error, and refuses a move from the wrong progress', async () => {
    const store = makeStore()
    const e = entry()
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
    const e = { ...entry(), record: { auth_type: 'oauth', client_id: 'c', scope: 'é 😀 ü\nline\r\n"q"\\' } }
    await store.create(e, { redirect: 'https://p.example/a?scope=%C3%A9' })
    await store.claim(e.hash)
    expect(await store.advance('awaiting_callback', { ...e, progress: 'exchanging', data: { note: 'ß\n😀' } })).toBe(
      'ok',
    )
    const got = (await store.get(e.hash))!
    expect(got).toMatchObject({ progress: 'exchanging', record: e.record, data: { note: 'ß\n😀' } })
    const ttl = await store.client.pttl(store.flowKey(e.hash))
    expect(ttl).toBeGreaterThan(590_000)
    expect(ttl).toBeLessThanOrEqual(600_000)
  })

  it('an unstarted flow lives store.expire; once /start claims it, store.callbackWait (a slow login)', async () => {
    const store = makeStore()
    const [plain, prepared, reusable] = [entry(), { ...entry(), data: { state: 's' } }, entry()]
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
    const e = entry()
    await store.create(e, { redirect: 'https://p.example/\nx' })
    expect((await store.claim(e.hash))!.redirect).toBe('https://p.example/\nx')
  })

  it('takes a flow kept in clear by the previous version (progress first, raw JSON) for a gone one', async () => {
    const store = makeStore()
    const e = entry()
    await store.client.set(store.flowKey(e.hash), `s0${JSON.stringify(e)}\n\n{}\n`)
    expect(await store.get(e.hash)).toBeUndefined()
    expect(await store.claim(e.hash)).toBeUndefined()
    expect(await store.advance('stored', e)).toBe('gone')
  })

  it('opens nothing that was altered or moved under another key', async () => {
    const store = makeStore()
    const [a, b] = [entry(), entry()]
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
      ...entry(),
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
    const e = entry()
    await old.create(e)
    await old.correlate('rt', e.hash, e.expiresAt)
    const code = newId()
    await old.putResult(code, { x: 1 })
    const rotated = new FlowStore(client, {
      expireSeconds: 60,
      callbackWaitSeconds: 600,
      secrets: ['a new secret, first in the list, 32 chars+', ...SECRETS],
    })
    const claimed = (await rotated.claim(e.hash))!
    expect(claimed.entry).toMatchObject({ hash: e.hash, progress: 'stored', generation: 1 })
    expect(await rotated.advance('started', { ...claimed.entry, progress: 'awaiting_callback', data: { n: 1 } })).toBe(
      'ok',
    )
    expect(await rotated.get(e.hash)).toMatchObject({ progress: 'awaiting_callback', data: { n: 1 } })
    expect(await rotated.correlated('rt')).toBe(e.hash)
    expect(await rotated.takeResult(code)).toEqual({ x: 1 })
    // A new flow is sealed with the new secret only: the old store alone cannot find it.
    const fresh = entry()
    await rotated.create(fresh)
    expect(await rotated.get(fresh.hash)).toMatchObject({ hash: fresh.hash })
    expect(await old.get(fresh.hash)).toBeUndefined()
  })

  it("derives a flow's key once for a read and the writes after it (a /callback's two transitions)", async () => {
    const store = makeStore()
    const e = entry()
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
    expect(await store.advance('stored', { ...entry(), hash: 'nope' })).toBe('gone')
  })
})

describe('FlowStore writes on a real Redis', () => {
  it("holds one event-loop turn's operations on the socket and sends them when the turn ends", async () => {
    const store = new FlowStore(client, { expireSeconds: 60, callbackWaitSeconds: 600, secrets: SECRETS })
    await client.ping()
    const socket = client.stream as Socket
    const entries = Array.from({ length: 5 }, entry)
    const created = Promise.all(entries.map((e) => store.create(e)))
    // Still in the turn: every command waits in the corked socket's buffer, none was written.
    expect(socket.writableCorked).toBe(1)
    expect(socket.writableLength).toBeGreaterThan(5 * 100)
    await created
    expect(socket.writableCorked).toBe(0)
    // Each operation still gets its own answer.
    expect((await Promise.all(entries.map((e) => store.get(e.hash)))).map((e) => e?.hash)).toEqual(
      entries.map((e) => e.hash),
    )
  })
})

describe('FlowStore when a reply is lost', () => {
  it('answers STORE_UNAVAILABLE for a write Redis did but never answered, never replays it into INTERNAL', async () => {
    const proxy = await startFaultProxy(redis.port)
    const config = configSchema.parse({ store: { host: '127.0.0.1', port: proxy.port, driver: 'redis', timeout: 400 } })
    const viaProxy = await connectStore(config.store, 'redis')
    try {
      const store = new FlowStore(viaProxy, { expireSeconds: 60, callbackWaitSeconds: 600, secrets: SECRETS })
      const e = entry()
      proxy.loseNextReply()
      // Redis keeps the flow; the broker, never told, must not call its own retry a clash (a 500).
      const err = await store.create(e).then(
        () => undefined,
        (x: { code?: string }) => x,
      )
      expect(err?.code).toBe('STORE_UNAVAILABLE')
      // The connection comes back by itself, and a claim whose answer is lost is not replayed either:
      // the replay would find the flow already claimed, a user's valid start URL answered 409.
      const second = entry()
      await store.create(second)
      proxy.loseNextReply()
      const lost = await store.claim(second.hash).then(
        () => undefined,
        (x: { code?: string }) => x,
      )
      expect(lost?.code).toBe('STORE_UNAVAILABLE')
    } finally {
      viaProxy.disconnect()
      proxy.close()
    }
  })
})

describe('store.replicas with fewer replicas connected (store.replicaShortfall)', () => {
  // A Redis without replicas stands for a failover's new master before the old one has resynced.
  const make = (shortfall: 'accept' | 'refuse', warn?: (m: string) => void) =>
    new FlowStore(client, {
      expireSeconds: 60,
      callbackWaitSeconds: 600,
      secrets: SECRETS,
      replicas: 1,
      waitMs: 100,
      shortfall,
      warn,
    })

  it('refuse: a write no replica acknowledged is STORE_UNAVAILABLE', async () => {
    await expect(make('refuse').create(entry())).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' })
  })

  it('accept: the write is answered with the replicas that acknowledged it (none), told once, and for a second writes send no WAIT', async () => {
    const told: string[] = []
    const store = make('accept', (m) => told.push(m))
    const e = entry()
    await store.create(e)
    expect((await store.get(e.hash))?.progress).toBe('stored')
    // The shortfall is known (for a second): the next writes send no WAIT at all.
    const waits = vi.spyOn(client, 'wait')
    for (let i = 0; i < 5; i++) await store.create(entry())
    expect(waits).not.toHaveBeenCalled()
    waits.mockRestore()
    expect(told).toHaveLength(1)
    expect(told[0]).toMatch(/answered with 0 of the 1 replicas/)
  })
})

describe('store.replicas: WAITs shared', () => {
  it('writes sent while a WAIT is out share the next one, so a replica shortfall queues one WAIT, not one per write', async () => {
    const store = new FlowStore(client, {
      expireSeconds: 60,
      callbackWaitSeconds: 600,
      secrets: SECRETS,
      replicas: 1,
      waitMs: 100,
    })
    const waits = vi.spyOn(client, 'wait')
    const results = await Promise.allSettled(Array.from({ length: 20 }, () => store.create(entry())))
    expect(results.every((r) => r.status === 'rejected')).toBe(true)
    // The first write's WAIT, then one shared by the 19 sent before it was out.
    expect(waits.mock.calls.length).toBeLessThanOrEqual(2)
    waits.mockRestore()
  })
})

describe('a Sentinel failover under way (the fence of failover.ts)', () => {
  type TestFence = { fenced: boolean; epoch: number; liftedAt?: number; switchedAt?: number }
  const make = (fence: TestFence, shortfall: 'accept' | 'refuse' | 'failover' = 'refuse', replicas = 0) =>
    new FlowStore(client, {
      expireSeconds: 60,
      callbackWaitSeconds: 600,
      secrets: SECRETS,
      replicas,
      waitMs: 100,
      shortfall,
      fence,
    })

  it('while fenced, a write is refused with STORE_UNAVAILABLE and not sent', async () => {
    const store = make({ fenced: true, epoch: 1 })
    const e = entry()
    await expect(store.create(e)).rejects.toMatchObject({
      code: 'STORE_UNAVAILABLE',
      message: expect.stringContaining('failing over'),
    })
    expect(await make({ fenced: false, epoch: 1 }).get(e.hash)).toBeUndefined()
  })

  it('a write sent before a failover began is not acknowledged, though the old master took it', async () => {
    const fence = { fenced: false, epoch: 0 }
    const store = make(fence)
    const e = entry()
    const created = store.create(e)
    fence.epoch++
    await expect(created).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' })
    expect((await store.get(e.hash))?.progress).toBe('stored')
  })

  it('reads go on while fenced', async () => {
    const fence = { fenced: false, epoch: 0 }
    const store = make(fence)
    const e = entry()
    await store.create(e)
    fence.fenced = true
    expect((await store.get(e.hash))?.progress).toBe('stored')
  })

  it('accept: the first write after a failover waits only for a probe, not store.timeout', async () => {
    const fence = { fenced: false, epoch: 0 }
    const store = make(fence, 'accept', 1)
    fence.epoch++
    const waits = vi.spyOn(client, 'wait')
    await store.create(entry())
    expect(waits.mock.calls).toEqual([[1, 50]])
    waits.mockRestore()
  })

  // A Redis without replicas: a replica down in steady state, or a new master whose old one is resyncing.
  it('failover: with no switch seen, a write no replica acknowledged is STORE_UNAVAILABLE', async () => {
    const fence: TestFence = { fenced: false, epoch: 1, liftedAt: Date.now() }
    await expect(make(fence, 'failover', 1).create(entry())).rejects.toMatchObject({
      code: 'STORE_UNAVAILABLE',
      message: expect.stringContaining('replicas'),
    })
  })

  it('failover: just after a switch, the write is answered after a probe, and kept on the master', async () => {
    const fence: TestFence = { fenced: false, epoch: 1 }
    const store = make(fence, 'failover', 1)
    fence.liftedAt = fence.switchedAt = Date.now()
    const waits = vi.spyOn(client, 'wait')
    const e = entry()
    await store.create(e)
    expect(waits.mock.calls).toEqual([[1, 50]])
    waits.mockRestore()
    expect((await store.get(e.hash))?.progress).toBe('stored')
  })
})

describe("/start's claim that does not count (a short WAIT, a failover begun) is undone", () => {
  // A Redis without replicas: every WAIT is short. Flows are stored by a store that asks for none. A
  // connection of its own: an undo not acknowledged is made again in the background (WAITs) until it is.
  let own: Redis
  beforeAll(() => void (own = new Redis({ port: redis.port })))
  afterAll(() => own.disconnect())
  const plain = () => new FlowStore(own, { expireSeconds: 60, callbackWaitSeconds: 600, secrets: SECRETS })
  const make = (fence?: { fenced: boolean; epoch: number }) =>
    new FlowStore(own, {
      expireSeconds: 60,
      callbackWaitSeconds: 600,
      secrets: SECRETS,
      replicas: fence ? 0 : 1,
      waitMs: 50,
      shortfall: 'refuse',
      fence,
    })

  it.each([
    ['first step at /start', undefined],
    ['first step ran at /store', 'https://p.example/authorize?state=s'],
  ])(
    'a claim no replica acknowledged answers STORE_UNAVAILABLE and leaves the flow as it was (%s): the next claim starts it',
    async (_label, redirect) => {
      const e = entry()
      await plain().create(e, { redirect })
      const key = plain().flowKey(e.hash)
      const before = await client.get(key)
      await expect(make().claim(e.hash)).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' })
      expect(await client.get(key)).toBe(before)
      // Its store.expire as before, not store.callbackWait.
      expect(await client.pttl(key)).toBeLessThanOrEqual(60_000)
      const again = await plain().claim(e.hash)
      expect(again).toMatchObject({ entry: { progress: 'stored' }, ...(redirect ? { redirect } : {}) })
    },
  )

  it('a claim sent before a failover began is undone on the master the write reached', async () => {
    const e = entry()
    await plain().create(e)
    const fence = { fenced: false, epoch: 0 }
    const claimed = make(fence).claim(e.hash)
    fence.epoch++
    await expect(claimed).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' })
    expect((await plain().get(e.hash))?.progress).toBe('stored')
  })

  it('a claim whose undo meets a failover under way is undone once the store is on the new master', async () => {
    const e = entry()
    await plain().create(e)
    const fence = { fenced: false, epoch: 0 }
    const claimed = make(fence).claim(e.hash)
    fence.epoch++
    fence.fenced = true
    await expect(claimed).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' })
    // Sent now, the undo would go to the old master, which forgets it once it is made a replica.
    await new Promise((r) => setTimeout(r, 300))
    expect((await plain().get(e.hash))?.progress).toBe('started')
    fence.fenced = false
    await vi.waitFor(async () => expect((await plain().get(e.hash))?.progress).toBe('stored'), { timeout: 3000 })
    expect(await client.pttl(plain().flowKey(e.hash))).toBeLessThanOrEqual(60_000)
  })

  it("an undo held back by a failover never undoes the retry's own claim, made meanwhile on the new master", async () => {
    const e = entry()
    await plain().create(e)
    const key = plain().flowKey(e.hash)
    const before = await client.get(key)
    const fence = { fenced: false, epoch: 0 }
    const claimed = make(fence).claim(e.hash)
    fence.epoch++
    fence.fenced = true
    await expect(claimed).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' })
    // The new master never had the claim; the browser's retry, at another instance, claims the flow there.
    await client.set(key, before!, 'PX', 60_000)
    await new Promise((r) => setTimeout(r, 100))
    expect(await plain().claim(e.hash)).toMatchObject({ entry: { progress: 'stored' } })
    fence.fenced = false
    await new Promise((r) => setTimeout(r, 500))
    expect((await plain().get(e.hash))?.progress).toBe('started')
  })

  it('an undo no replica acknowledged is made again until one does: a replica promoted with the claim alone is undone too', async () => {
    const e = { ...entry(), expiresAt: Date.now() + 3000 }
    await plain().create(e, { redirect: 'https://p.example/authorize?state=s' })
    const key = plain().flowKey(e.hash)
    const before = (await client.get(key))!
    await expect(make().claim(e.hash)).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' })
    expect(await client.get(key)).toBe(before)
    // A failover promotes a replica that had the claim but not its undo.
    await client.set(key, `${before[0]}a${before.slice(2)}`, 'PX', 599_000)
    await vi.waitFor(async () => expect(await client.get(key)).toBe(before), { timeout: 2000 })
  })

  it('undoes only its own claim: a flow ended meanwhile is left as it is', async () => {
    const e = entry()
    await plain().create(e)
    const store = make()
    const claimed = store.claim(e.hash)
    // Another write lands between the claim and its undo (the claim's WAIT is out).
    await new Promise((r) => setTimeout(r, 10))
    expect(await plain().advance('started', { ...e, progress: 'failed' })).toBe('ok')
    await expect(claimed).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' })
    expect((await plain().get(e.hash))?.progress).toBe('failed')
  })

  it("a claim that counted, whose first step's write did not, is undone too (unstart): as /store left it", async () => {
    const e = entry()
    const store = plain()
    await store.create(e)
    const key = store.flowKey(e.hash)
    const before = await client.get(key)
    const claimed = (await store.claim(e.hash))!
    // The first step's write, carried out on the master though /start answers 503 for it.
    expect(await store.advance('started', { ...e, progress: 'awaiting_callback', data: { nonce: 'n' } })).toBe('ok')
    await store.unstart(claimed)
    expect(await client.get(key)).toBe(before)
    expect(await client.pttl(key)).toBeLessThanOrEqual(60_000)
    // A flow that was not claimed by this store, or not claimed at all, is not touched.
    await plain().unstart(claimed)
    expect((await store.claim(e.hash))!.entry.progress).toBe('stored')
  })
})

describe("/callback's move to exchanging that does not count (a short WAIT, a failover begun) is undone", () => {
  // As for /start's claim: a Redis without replicas, so every WAIT is short; a connection of its own.
  let own: Redis
  beforeAll(() => void (own = new Redis({ port: redis.port })))
  afterAll(() => own.disconnect())
  const plain = () => new FlowStore(own, { expireSeconds: 60, callbackWaitSeconds: 600, secrets: SECRETS })
  const make = (fence?: { fenced: boolean; epoch: number }) =>
    new FlowStore(own, {
      expireSeconds: 60,
      callbackWaitSeconds: 600,
      secrets: SECRETS,
      replicas: fence ? 0 : 1,
      waitMs: 50,
      shortfall: 'refuse',
      fence,
    })
  /** A flow as /start leaves it for its callback: claimed, then moved to awaiting_callback by its first step. */
  const awaiting = async (): Promise<FlowEntry> => {
    const e = entry()
    await plain().create(e)
    await plain().claim(e.hash)
    const next = { ...e, progress: 'awaiting_callback' as const, data: { state: 's' } }
    expect(await plain().advance('started', next)).toBe('ok')
    return next
  }
  const exchanging = (e: FlowEntry): FlowEntry => ({ ...e, progress: 'exchanging', leaseUntil: Date.now() + 2000 })

  it('a move no replica acknowledged answers STORE_UNAVAILABLE and puts back the very value it found, with its time to live', async () => {
    const e = await awaiting()
    const key = plain().flowKey(e.hash)
    const before = await client.get(key)
    const ttl = await client.pttl(key)
    await expect(make().advance('awaiting_callback', exchanging(e))).rejects.toMatchObject({
      code: 'STORE_UNAVAILABLE',
    })
    expect(await client.get(key)).toBe(before)
    expect(await client.pttl(key)).toBeLessThanOrEqual(ttl)
    expect(await client.pttl(key)).toBeGreaterThan(ttl - 5_000)
    // The reload's move to exchanging is made, with its own lease.
    expect(await plain().advance('awaiting_callback', exchanging(e))).toBe('ok')
  })

  it('a move sent before a failover began is undone on the master the write reached', async () => {
    const e = await awaiting()
    const fence = { fenced: false, epoch: 0 }
    const moved = make(fence).advance('awaiting_callback', exchanging(e))
    fence.epoch++
    await expect(moved).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' })
    expect((await plain().get(e.hash))?.progress).toBe('awaiting_callback')
  })

  it('an undo held back by a failover is made once the store is on the new master', async () => {
    const e = await awaiting()
    const fence = { fenced: false, epoch: 0 }
    const moved = make(fence).advance('awaiting_callback', exchanging(e))
    fence.epoch++
    fence.fenced = true
    await expect(moved).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' })
    await new Promise((r) => setTimeout(r, 300))
    expect((await plain().get(e.hash))?.progress).toBe('exchanging')
    fence.fenced = false
    await vi.waitFor(async () => expect((await plain().get(e.hash))?.progress).toBe('awaiting_callback'), {
      timeout: 3000,
    })
  })

  it('an undo no replica acknowledged is made again until one does: a replica promoted with the move alone is undone too', async () => {
    const e = await awaiting()
    const key = plain().flowKey(e.hash)
    const before = (await client.get(key))!
    const mine = { ...exchanging(e), expiresAt: Date.now() + 3000 }
    let moved: string | undefined
    const watch = new Redis({ port: redis.port })
    try {
      const store = make()
      const sent = store.advance('awaiting_callback', mine)
      // The move as the master made it, read before its undo (the move's WAIT is out).
      await vi.waitFor(async () => expect((moved = (await watch.get(key))!)).not.toBe(before), { timeout: 1000 })
      await expect(sent).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' })
      expect(await client.get(key)).toBe(before)
      // A failover promotes a replica that had the move but not its undo.
      await client.set(key, moved!, 'PX', 50_000)
      await vi.waitFor(async () => expect(await client.get(key)).toBe(before), { timeout: 2000 })
    } finally {
      watch.disconnect()
    }
  })

  it('undoes only its own move: a flow moved on meanwhile (its lease lapsed, failed by a held request) stays', async () => {
    const e = await awaiting()
    const mine = exchanging(e)
    const moved = make().advance('awaiting_callback', mine)
    // Another write lands between the move and its undo (the move's WAIT is out).
    await new Promise((r) => setTimeout(r, 10))
    expect(await plain().advance('exchanging', { ...mine, progress: 'failed' })).toBe('ok')
    await expect(moved).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' })
    expect((await plain().get(e.hash))?.progress).toBe('failed')
  })

  it('other moves that do not count are not undone (the provider may have been called)', async () => {
    const e = await awaiting()
    const mine = exchanging(e)
    expect(await plain().advance('awaiting_callback', mine)).toBe('ok')
    await expect(make().advance('exchanging', { ...mine, progress: 'completed' })).rejects.toMatchObject({
      code: 'STORE_UNAVAILABLE',
    })
    expect((await plain().get(e.hash))?.progress).toBe('completed')
  })
})
