import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FlowEvent } from '../events.js'
import { type RedisServer, startRedis } from '../../test/helpers/redis.js'
import { waitFor } from '../../test/helpers/ports.js'
import { configSchema } from '../config/schema.js'
import { type Broker, createBroker } from '../services/broker.js'
import { resolveSecrets } from '../services/serve/secrets.js'

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

describe('flow events through Redis pub/sub', () => {
  it('reach the other broker once, and not the publisher twice', async () => {
    const seenA: FlowEvent[] = []
    const seenB: FlowEvent[] = []
    a.events.on('flow', (e) => seenA.push(e))
    b.events.on('flow', (e) => seenB.push(e))
    a.events.publish({ type: 'stored', hash: 'h1', plugin: 'oauth_2_3-legged', progress: 'stored' })
    await waitFor(async () => seenB.length === 1, 5000, 'the event at b')
    await new Promise((r) => setTimeout(r, 200))
    expect(seenB[0]).toMatchObject({ type: 'stored', hash: 'h1' })
    expect(seenA).toHaveLength(1)
    expect(seenB).toHaveLength(1)
  })
})
