import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type RedisServer, startRedis } from '../../../test/helpers/redis.js'
import { waitFor } from '../../../test/helpers/ports.js'
import { configSchema } from '../../config/schema.js'
import { type FailoverWatch, watchFailovers } from './failover.js'

// A plain redis-server stands in for the Sentinel: the watch only subscribes to its event channels, so
// publishing Sentinel's messages there drives it step by step. The same server is the client's master.
let server: RedisServer
let publisher: Redis

beforeAll(async () => {
  server = await startRedis()
  publisher = new Redis({ port: server.port })
})
afterAll(async () => {
  publisher?.disconnect()
  await server?.stop()
})

async function watching(run: (w: FailoverWatch, client: Redis, port: number) => Promise<void>) {
  const store = configSchema.parse({
    store: { driver: 'redis', sentinels: [`127.0.0.1:${server.port}`], name: 'bm' },
  }).store
  const client = new Redis({ port: server.port })
  await waitFor(async () => client.status === 'ready', 5000, 'client ready')
  const log = { warn: () => undefined, info: () => undefined }
  const w = await watchFailovers(store, client, log)
  try {
    await run(w, client, server.port)
  } finally {
    await w.close()
    client.disconnect()
  }
}

/** Publishes one Sentinel event and lets the watch hear it. */
async function event(name: string, message: string) {
  await publisher.publish(name, message)
  await new Promise((r) => setTimeout(r, 50))
}

describe('watchFailovers (Sentinel events on a stand-in server)', () => {
  it('fences from the first event of a failover of its master, and not for another master', async () => {
    await watching(async (w, _client, port) => {
      await event('+try-failover', `master other 127.0.0.1 ${port}`)
      expect(w.fenced).toBe(false)
      await event('+try-failover', `master bm 127.0.0.1 ${port}`)
      expect(w.fenced).toBe(true)
      expect(w.epoch).toBe(1)
    })
  })

  it('lifts the fence when the failover is aborted', async () => {
    await watching(async (w, _client, port) => {
      await event('+selected-slave', `slave 127.0.0.1:1 127.0.0.1 1 @ bm 127.0.0.1 ${port}`)
      expect(w.fenced).toBe(true)
      await event('-failover-abort-slave-timeout', `master bm 127.0.0.1 ${port}`)
      expect(w.fenced).toBe(false)
    })
  })

  it('tells when the fence lifted, and nothing before a failover ended', async () => {
    await watching(async (w, _client, port) => {
      expect(w.liftedAt).toBeUndefined()
      await event('+try-failover', `master bm 127.0.0.1 ${port}`)
      expect(w.liftedAt).toBeUndefined()
      const before = Date.now()
      await event('-failover-abort-not-elected', `master bm 127.0.0.1 ${port}`)
      expect(w.fenced).toBe(false)
      expect(w.liftedAt).toBeGreaterThanOrEqual(before)
      // Aborted: the master is the one it was, replicas and all; no switch.
      expect(w.switchedAt).toBeUndefined()
    })
  })

  it('stays fenced after the promotion until the client is on the promoted replica, dropping its connection to the old master', async () => {
    await watching(async (w, client, port) => {
      await event('+failover-state-send-slaveof-noone', `slave 127.0.0.1:1 127.0.0.1 1 @ bm 127.0.0.1 ${port}`)
      let dropped = false
      client.once('close', () => (dropped = true))
      await event('+promoted-slave', `slave 127.0.0.1:1 127.0.0.1 1 @ bm 127.0.0.1 ${port}`)
      expect(dropped).toBe(true)
      // The rest of that failover names the old master: no new fence, still the one for the switch.
      const epoch = w.epoch
      await event('+failover-state-reconf-slaves', `master bm 127.0.0.1 ${port}`)
      expect(w.epoch).toBe(epoch)
      expect(w.fenced).toBe(true)
    })
  })

  it('lifts the fence once the client is on the master the failover ended with', async () => {
    await watching(async (w, _client, port) => {
      await event('+try-failover', `master bm 127.0.0.1 1`)
      expect(w.fenced).toBe(true)
      // Promoted to where the client already is.
      const before = Date.now()
      await event('+promoted-slave', `slave 127.0.0.1:${port} 127.0.0.1 ${port} @ bm 127.0.0.1 1`)
      expect(w.fenced).toBe(false)
      expect(w.switchedAt).toBeGreaterThanOrEqual(before)
      const switchedAt = w.switchedAt
      // The same switch told again: not a new one.
      await event('+switch-master', `bm 127.0.0.1 1 127.0.0.1 ${port}`)
      expect(w.fenced).toBe(false)
      expect(w.switchedAt).toBe(switchedAt)
    })
  })
})
