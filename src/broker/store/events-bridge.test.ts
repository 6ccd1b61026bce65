import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FlowEvent } from '../events.js'
import { type RedisServer, startRedis } from '../../../test/helpers/redis.js'
import { waitFor } from '../../../test/helpers/ports.js'
import { configSchema } from '../../config/schema.js'
import { type Broker, createBroker } from '../index.js'
import { resolveSecrets } from '../../services/serve/secrets.js'

let redis: RedisServer
let a: Broker
let b: Broker

beforeAll(async () => {
  redis = await startRedis()
  const config = resolveSecrets(configSchema.parse({ log: { level: 'silent' }, store: { port: redis.port } })).config
  ;[a, b] = await Promise.all([createBroker(config, 'redis'), createBroker(config, 'redis')])
})

afterAll(async () => {
  await Promise.all([a?.close(), b?.close()])
  await redis?.stop()
})

const subscribers = async () => {
  const probe = new Redis({ port: redis.port })
  const [, n] = (await probe.pubsub('NUMSUB', a.store.keys.events())) as [string, number]
  probe.disconnect()
  return n
}

describe('flow events through Redis pub/sub', () => {
  it('subscribe a process only once something in it listens', async () => {
    a.events.publish({ type: 'stored', hash: 'h0', plugin: 'oauth_2_3-legged', progress: 'stored' })
    expect(await subscribers()).toBe(0)
  })

  it('reach the other broker once, in order, and not the publisher twice', async () => {
    const seenA: FlowEvent[] = []
    const seenB: FlowEvent[] = []
    a.events.on('flow', (e) => seenA.push(e))
    b.events.on('flow', (e) => seenB.push(e))
    await Promise.all([a.events.subscribed, b.events.subscribed])
    expect(await subscribers()).toBe(2)
    // Events of one tick travel together; each still arrives as itself, in order.
    a.events.publish({ type: 'stored', hash: 'h1', plugin: 'oauth_2_3-legged', progress: 'stored' })
    a.events.publish({ type: 'started', hash: 'h1', plugin: 'oauth_2_3-legged', progress: 'started' })
    await new Promise((r) => setTimeout(r, 20))
    a.events.publish({ type: 'redirected', hash: 'h1', plugin: 'oauth_2_3-legged', progress: 'awaiting_callback' })
    await waitFor(async () => seenB.length === 3, 5000, 'the events at b')
    await new Promise((r) => setTimeout(r, 200))
    expect(seenB.map((e) => e.type)).toEqual(['stored', 'started', 'redirected'])
    expect(seenA).toHaveLength(3)
    expect(seenB).toHaveLength(3)
  })

  it('travel sealed: a Redis client that subscribes to the channel reads no hash', async () => {
    const spy = new Redis({ port: redis.port })
    const heard: string[] = []
    spy.on('message', (_channel: string, message: string) => heard.push(message))
    await spy.subscribe(a.store.keys.events())
    const seenB: FlowEvent[] = []
    b.events.on('flow', (e) => seenB.push(e))
    await b.events.subscribed
    // The spy counts as a watcher too: a relays to Redis once it has noticed subscribers (its poll, or a hello).
    await waitFor(async () => a.events.relay !== undefined, 5000, 'a relaying its events')
    a.events.publish({ type: 'stored', hash: 'SECRET-HASH-VALUE', plugin: 'oauth_2_3-legged', progress: 'stored' })
    await waitFor(async () => seenB.some((e) => e.hash === 'SECRET-HASH-VALUE'), 5000, 'the event at b')
    spy.disconnect()
    expect(heard.length).toBeGreaterThan(0)
    expect(heard.join('\n')).not.toContain('SECRET-HASH')
    expect(heard.join('\n')).not.toContain('oauth_2_3')
  })
})

describe('flow events nobody watches', () => {
  it('are not published to Redis, and are again once another process subscribes', async () => {
    // Instances on one Redis share their secrets (the states they issue and the events they seal depend on them).
    const config = resolveSecrets(
      configSchema.parse({ log: { level: 'silent' }, store: { port: redis.port, prefix: 'quiet:' } }),
    ).config
    const c = await createBroker(config, 'redis')
    const d = await createBroker(config, 'redis')
    const monitor = new Redis({ port: redis.port })
    const published: string[] = []
    try {
      const stats = async () => Number(/cmdstat_publish:calls=(\d+)/.exec(await monitor.info('commandstats'))?.[1] ?? 0)
      const before = await stats()
      c.events.publish({ type: 'stored', hash: 'q1', plugin: 'oauth_2_3-legged', progress: 'stored' })
      await new Promise((r) => setTimeout(r, 50))
      expect(await stats()).toBe(before)
      d.events.on('flow', (e) => published.push(e.hash))
      await d.events.subscribed
      c.events.publish({ type: 'stored', hash: 'q2', plugin: 'oauth_2_3-legged', progress: 'stored' })
      await waitFor(async () => published.includes('q2'), 5000, 'the event at d')
      expect(published).toEqual(['q2'])
    } finally {
      monitor.disconnect()
      await Promise.all([c.close(), d.close()])
    }
  })
})
