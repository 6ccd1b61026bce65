import { Redis } from 'ioredis'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { type RedisServer, startRedis } from '../../../test/helpers/redis.js'
import { waitFor } from '../../../test/helpers/ports.js'
import { configSchema } from '../../config/schema.js'
import { type Broker, createBroker } from '../index.js'
import { resolveSecrets } from '../../services/serve/secrets.js'
import type { FlowEvent } from '../events.js'
import { WATCH_POLL_MS } from './events-bridge.js'

// Its own Redis: the server's command counts are the measure.
let redis: RedisServer
let probe: Redis
const brokers: Broker[] = []

beforeAll(async () => {
  redis = await startRedis()
  probe = new Redis({ port: redis.port })
})
afterAll(async () => {
  await Promise.all(brokers.map((b) => b.close()))
  probe?.disconnect()
  await redis?.stop()
})

// One config for both: instances on one Redis share their secrets (events are sealed under them).
let shared: ReturnType<typeof resolveSecrets>['config'] | undefined
const config = () =>
  (shared ??= resolveSecrets(
    configSchema.parse({ log: { level: 'silent' }, store: { port: redis.port, prefix: 'idle:' } }),
  ).config)
/** How many PUBSUB NUMSUB the server ran since the last reset. */
const numsubCalls = async () =>
  Number(/cmdstat_pubsub\|numsub:calls=(\d+)/.exec(await probe.info('commandstats'))?.[1] ?? 0)
afterEach(() => void vi.useRealTimers())

describe('flow events while nobody watches', () => {
  it('cost Redis nothing: no PUBSUB NUMSUB poll until a watcher says hello, and events reach it then', async () => {
    // The bridge polls on a setInterval of WATCH_POLL_MS: faked, five periods pass without waiting them out.
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] })
    const a = await createBroker(config(), 'redis')
    brokers.push(a)
    await probe.config('RESETSTAT')
    await vi.advanceTimersByTimeAsync(5 * WATCH_POLL_MS)
    // A NUMSUB a poll sent on a's connection is answered before this PING is.
    await a.store.client.ping()
    expect(await numsubCalls()).toBe(0)
    vi.useRealTimers()

    const b = await createBroker(config(), 'redis')
    brokers.push(b)
    const seen: FlowEvent[] = []
    b.events.on('flow', (e) => seen.push(e))
    await b.events.subscribed
    a.events.publish({ type: 'stored', hash: 'h-idle', plugin: 'oauth_2_3-legged', progress: 'stored' })
    await waitFor(async () => seen.some((e) => e.hash === 'h-idle'), 5000, 'the event at b')
    expect(await numsubCalls()).toBeGreaterThan(0)
  })
})
