import type { Socket } from 'node:net'
import { describe, expect, it, vi } from 'vitest'
import { startFaultProxy } from '../../../test/helpers/fault-proxy.js'
import { newEntry, testStore } from '../../../test/helpers/flow-store.js'
import { redisPeer } from '../../../test/helpers/redis-peer.js'
import { configSchema } from '../../config/schema.js'
import { connectStore } from './connect.js'

// How the flow store's operations go out (io.ts), driven through a FlowStore on a real Redis: a turn's
// writes in one socket write, a lost reply, store.replicas and its shortfall, a Sentinel failover's fence.
const redis = redisPeer()

describe('FlowStore writes on a real Redis', () => {
  it("holds one event-loop turn's operations on the socket and sends them when the turn ends", async () => {
    const store = testStore(redis.client)
    await redis.client.ping()
    const socket = redis.client.stream as Socket
    const entries = Array.from({ length: 5 }, newEntry)
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
    const proxy = await startFaultProxy(redis.server.port)
    const config = configSchema.parse({ store: { host: '127.0.0.1', port: proxy.port, driver: 'redis', timeout: 400 } })
    const viaProxy = await connectStore(config.store, 'redis')
    try {
      const store = testStore(viaProxy)
      const e = newEntry()
      proxy.loseNextReply()
      // Redis keeps the flow; the broker, never told, must not call its own retry a clash (a 500).
      const err = await store.create(e).then(
        () => undefined,
        (x: { code?: string }) => x,
      )
      expect(err?.code).toBe('STORE_UNAVAILABLE')
      // The connection comes back by itself, and a claim whose answer is lost is not replayed either:
      // the replay would find the flow already claimed, a user's valid start URL answered 409.
      const second = newEntry()
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
    testStore(redis.client, { replicas: 1, waitMs: 100, shortfall, warn })

  it('refuse: a write no replica acknowledged is STORE_UNAVAILABLE', async () => {
    await expect(make('refuse').create(newEntry())).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' })
  })

  it('accept: the write is answered with the replicas that acknowledged it (none), told once, and for a second writes send no WAIT', async () => {
    const told: string[] = []
    const store = make('accept', (m) => told.push(m))
    const e = newEntry()
    await store.create(e)
    expect((await store.get(e.hash))?.progress).toBe('stored')
    // The shortfall is known (for a second): the next writes send no WAIT at all.
    const waits = vi.spyOn(redis.client, 'wait')
    for (let i = 0; i < 5; i++) await store.create(newEntry())
    expect(waits).not.toHaveBeenCalled()
    waits.mockRestore()
    expect(told).toHaveLength(1)
    expect(told[0]).toMatch(/answered with 0 of the 1 replicas/)
  })
})

describe('store.replicas: WAITs shared', () => {
  it('writes sent while a WAIT is out share the next one, so a replica shortfall queues one WAIT, not one per write', async () => {
    const store = testStore(redis.client, { replicas: 1, waitMs: 100 })
    const waits = vi.spyOn(redis.client, 'wait')
    const results = await Promise.allSettled(Array.from({ length: 20 }, () => store.create(newEntry())))
    expect(results.every((r) => r.status === 'rejected')).toBe(true)
    // The first write's WAIT, then one shared by the 19 sent before it was out.
    expect(waits.mock.calls.length).toBeLessThanOrEqual(2)
    waits.mockRestore()
  })
})

describe('a Sentinel failover under way (the fence of failover.ts)', () => {
  type TestFence = { fenced: boolean; epoch: number; liftedAt?: number; switchedAt?: number }
  const make = (fence: TestFence, shortfall: 'accept' | 'refuse' | 'failover' = 'refuse', replicas = 0) =>
    testStore(redis.client, { replicas, waitMs: 100, shortfall, fence })

  it('while fenced, a write is refused with STORE_UNAVAILABLE and not sent', async () => {
    const store = make({ fenced: true, epoch: 1 })
    const e = newEntry()
    await expect(store.create(e)).rejects.toMatchObject({
      code: 'STORE_UNAVAILABLE',
      message: expect.stringContaining('failing over'),
    })
    expect(await make({ fenced: false, epoch: 1 }).get(e.hash)).toBeUndefined()
  })

  it('a write sent before a failover began is not acknowledged, though the old master took it', async () => {
    const fence = { fenced: false, epoch: 0 }
    const store = make(fence)
    const e = newEntry()
    const created = store.create(e)
    fence.epoch++
    await expect(created).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' })
    expect((await store.get(e.hash))?.progress).toBe('stored')
  })

  it('reads go on while fenced', async () => {
    const fence = { fenced: false, epoch: 0 }
    const store = make(fence)
    const e = newEntry()
    await store.create(e)
    fence.fenced = true
    expect((await store.get(e.hash))?.progress).toBe('stored')
  })

  it('accept: the first write after a failover waits only for a probe, not store.timeout', async () => {
    const fence = { fenced: false, epoch: 0 }
    const store = make(fence, 'accept', 1)
    fence.epoch++
    const waits = vi.spyOn(redis.client, 'wait')
    await store.create(newEntry())
    expect(waits.mock.calls).toEqual([[1, 50]])
    waits.mockRestore()
  })

  // A Redis without replicas: a replica down in steady state, or a new master whose old one is resyncing.
  it('failover: with no switch seen, a write no replica acknowledged is STORE_UNAVAILABLE', async () => {
    const fence: TestFence = { fenced: false, epoch: 1, liftedAt: Date.now() }
    await expect(make(fence, 'failover', 1).create(newEntry())).rejects.toMatchObject({
      code: 'STORE_UNAVAILABLE',
      message: expect.stringContaining('replicas'),
    })
  })

  it('failover: just after a switch, the write is answered after a probe, and kept on the master', async () => {
    const fence: TestFence = { fenced: false, epoch: 1 }
    const store = make(fence, 'failover', 1)
    fence.liftedAt = fence.switchedAt = Date.now()
    const waits = vi.spyOn(redis.client, 'wait')
    const e = newEntry()
    await store.create(e)
    expect(waits.mock.calls).toEqual([[1, 50]])
    waits.mockRestore()
    expect((await store.get(e.hash))?.progress).toBe('stored')
  })
})
