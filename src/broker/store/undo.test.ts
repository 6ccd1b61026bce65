import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { bothStores, newEntry, testStore } from '../../../test/helpers/flow-store.js'
import { redisPeer } from '../../../test/helpers/redis-peer.js'
import type { FlowEntry, FlowStore, Progress } from './flow-store.js'

// undo.ts: a claim or a move the master carried out that does not count is put back, and made again until
// it counts. Driven through a FlowStore, as /start and /callback use it.
const redis = redisPeer()

/**
 * The stores of one describe, on a connection of its own: an undo not acknowledged is made again in the
 * background (WAITs) until it is, which would hold up another describe's commands. `plain` asks for no
 * replica; `make` for one (a Redis without replicas: every WAIT is short) or, given a `fence`, for none
 * and lets the fence decide.
 */
function shortStores() {
  let own: Redis
  beforeAll(() => void (own = new Redis({ port: redis.server.port })))
  afterAll(() => own.disconnect())
  return {
    plain: () => testStore(own),
    make: (fence?: { fenced: boolean; epoch: number }) =>
      testStore(own, { replicas: fence ? 0 : 1, waitMs: 50, shortfall: 'refuse', fence }),
  }
}

/**
 * A claim or a move fenced by a failover under way answers STORE_UNAVAILABLE, and its undo waits for the
 * new master: sent at once, it would go to the old master, which forgets it once it is made a replica.
 */
async function undoneOnceFailedOver(
  { plain, make }: ReturnType<typeof shortStores>,
  e: FlowEntry,
  op: (store: FlowStore) => Promise<unknown>,
  held: Progress,
  undone: Progress,
  /** The time to live the undone flow has at most (a claim's undo gives back /store's store.expire). */
  ttlAtMost?: number,
): Promise<void> {
  const fence = { fenced: false, epoch: 0 }
  const pending = op(make(fence))
  fence.epoch++
  fence.fenced = true
  await expect(pending).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' })
  await new Promise((r) => setTimeout(r, 300))
  expect((await plain().get(e.hash))?.progress).toBe(held)
  fence.fenced = false
  await vi.waitFor(async () => expect((await plain().get(e.hash))?.progress).toBe(undone), { timeout: 3000 })
  if (ttlAtMost !== undefined) expect(await redis.client.pttl(plain().flowKey(e.hash))).toBeLessThanOrEqual(ttlAtMost)
}

// The same on a real Redis and on the embedded store (whose Lua runs elsewhere).
describe.each(bothStores(() => redis.client))('unstart on %s', (_label, makeStore) => {
  it("a claim that counted, whose first step's write did not, is undone too: as /store left it, its store.expire with it", async () => {
    const e = newEntry()
    const store = makeStore()
    await store.create(e)
    const key = store.flowKey(e.hash)
    const before = await store.client.get(key)
    const claimed = (await store.claim(e.hash))!
    // The first step's write, carried out on the master though /start answers 503 for it.
    expect(await store.advance('started', { ...e, progress: 'awaiting_callback', data: { nonce: 'n' } })).toBe('ok')
    await store.unstart(claimed)
    expect(await store.client.get(key)).toBe(before)
    expect(await store.client.pttl(key)).toBeLessThanOrEqual(60_000)
    // A flow that was not claimed by this store, or not claimed at all, is not touched.
    await testStore(store.client).unstart(claimed)
    expect((await store.claim(e.hash))!.entry.progress).toBe('stored')
  })
})

describe("/start's claim that does not count (a short WAIT, a failover begun) is undone", () => {
  const { plain, make } = shortStores()

  it.each([
    ['first step at /start', undefined],
    ['first step ran at /store', 'https://p.example/authorize?state=s'],
  ])(
    'a claim no replica acknowledged answers STORE_UNAVAILABLE and leaves the flow as it was (%s): the next claim starts it',
    async (_label, redirect) => {
      const e = newEntry()
      await plain().create(e, { redirect })
      const key = plain().flowKey(e.hash)
      const before = await redis.client.get(key)
      await expect(make().claim(e.hash)).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' })
      expect(await redis.client.get(key)).toBe(before)
      // Its store.expire as before, not store.callbackWait.
      expect(await redis.client.pttl(key)).toBeLessThanOrEqual(60_000)
      const again = await plain().claim(e.hash)
      expect(again).toMatchObject({ entry: { progress: 'stored' }, ...(redirect ? { redirect } : {}) })
    },
  )

  it('a claim sent before a failover began is undone on the master the write reached', async () => {
    const e = newEntry()
    await plain().create(e)
    const fence = { fenced: false, epoch: 0 }
    const claimed = make(fence).claim(e.hash)
    fence.epoch++
    await expect(claimed).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' })
    expect((await plain().get(e.hash))?.progress).toBe('stored')
  })

  it('a claim whose undo meets a failover under way is undone once the store is on the new master', async () => {
    const e = newEntry()
    await plain().create(e)
    await undoneOnceFailedOver({ plain, make }, e, (store) => store.claim(e.hash), 'started', 'stored', 60_000)
  })

  it("tells a /start reload the claim's undo it is still making, settled once the flow is back", async () => {
    const e = newEntry()
    await plain().create(e)
    const fence = { fenced: false, epoch: 0 }
    const store = make(fence)
    const claimed = store.claim(e.hash)
    fence.epoch++
    fence.fenced = true
    await expect(claimed).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' })
    const undoing = store.unclaimingOf(e.hash)
    expect(undoing).toBeDefined()
    expect(plain().unclaimingOf(e.hash)).toBeUndefined()
    fence.fenced = false
    expect(await undoing).toBe(true)
    expect((await plain().get(e.hash))?.progress).toBe('stored')
    expect(store.unclaimingOf(e.hash)).toBeUndefined()
  })

  it("an undo held back by a failover never undoes the retry's own claim, made meanwhile on the new master", async () => {
    const e = newEntry()
    await plain().create(e)
    const key = plain().flowKey(e.hash)
    const before = await redis.client.get(key)
    const fence = { fenced: false, epoch: 0 }
    const claimed = make(fence).claim(e.hash)
    fence.epoch++
    fence.fenced = true
    await expect(claimed).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' })
    // The new master never had the claim; the browser's retry, at another instance, claims the flow there.
    await redis.client.set(key, before!, 'PX', 60_000)
    await new Promise((r) => setTimeout(r, 100))
    expect(await plain().claim(e.hash)).toMatchObject({ entry: { progress: 'stored' } })
    fence.fenced = false
    await new Promise((r) => setTimeout(r, 500))
    expect((await plain().get(e.hash))?.progress).toBe('started')
  })

  it('an undo no replica acknowledged is made again until one does: a replica promoted with the claim alone is undone too', async () => {
    const e = { ...newEntry(), expiresAt: Date.now() + 3000 }
    await plain().create(e, { redirect: 'https://p.example/authorize?state=s' })
    const key = plain().flowKey(e.hash)
    const before = (await redis.client.get(key))!
    await expect(make().claim(e.hash)).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' })
    expect(await redis.client.get(key)).toBe(before)
    // A failover promotes a replica that had the claim but not its undo.
    await redis.client.set(key, `${before[0]}a${before.slice(2)}`, 'PX', 599_000)
    await vi.waitFor(async () => expect(await redis.client.get(key)).toBe(before), { timeout: 2000 })
  })

  it('undoes only its own claim: a flow ended meanwhile is left as it is', async () => {
    const e = newEntry()
    await plain().create(e)
    const store = make()
    const claimed = store.claim(e.hash)
    // Another write lands between the claim and its undo (the claim's WAIT is out).
    await new Promise((r) => setTimeout(r, 10))
    expect(await plain().advance('started', { ...e, progress: 'failed' })).toBe('ok')
    await expect(claimed).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' })
    expect((await plain().get(e.hash))?.progress).toBe('failed')
  })
})

describe("/callback's move to exchanging that does not count (a short WAIT, a failover begun) is undone", () => {
  const { plain, make } = shortStores()
  /** A flow as /start leaves it for its callback: claimed, then moved to awaiting_callback by its first step. */
  const awaiting = async (): Promise<FlowEntry> => {
    const e = newEntry()
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
    const before = await redis.client.get(key)
    const ttl = await redis.client.pttl(key)
    await expect(make().advance('awaiting_callback', exchanging(e))).rejects.toMatchObject({
      code: 'STORE_UNAVAILABLE',
    })
    expect(await redis.client.get(key)).toBe(before)
    expect(await redis.client.pttl(key)).toBeLessThanOrEqual(ttl)
    expect(await redis.client.pttl(key)).toBeGreaterThan(ttl - 5_000)
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
    const move = (store: FlowStore) => store.advance('awaiting_callback', exchanging(e))
    await undoneOnceFailedOver({ plain, make }, e, move, 'exchanging', 'awaiting_callback')
  })

  it('an undo no replica acknowledged is made again until one does: a replica promoted with the move alone is undone too', async () => {
    const e = await awaiting()
    const key = plain().flowKey(e.hash)
    const before = (await redis.client.get(key))!
    const mine = { ...exchanging(e), expiresAt: Date.now() + 3000 }
    let moved: string | undefined
    const watch = new Redis({ port: redis.server.port })
    try {
      const store = make()
      const sent = store.advance('awaiting_callback', mine)
      // The move as the master made it, read before its undo (the move's WAIT is out).
      await vi.waitFor(async () => expect((moved = (await watch.get(key))!)).not.toBe(before), { timeout: 1000 })
      await expect(sent).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' })
      expect(await redis.client.get(key)).toBe(before)
      // A failover promotes a replica that had the move but not its undo.
      await redis.client.set(key, moved!, 'PX', 50_000)
      await vi.waitFor(async () => expect(await redis.client.get(key)).toBe(before), { timeout: 2000 })
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
