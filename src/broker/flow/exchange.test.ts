import RedisMock from 'ioredis-mock'
import type { Redis } from 'ioredis'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { memoryBroker } from '../../../test/helpers/deps.js'
import { flowIn } from '../../../test/helpers/exchanging.js'
import { testStore } from '../../../test/helpers/flow-store.js'
import type { BrokerDeps } from '../deps.js'
import type { Broker } from '../index.js'
import type { FlowStore } from '../store/flow-store.js'
import { beginExchange } from './exchange.js'

// /callback's move to `exchanging` that the master carries out but no replica acknowledges (a replica lagging in
// steady state, store.replicaShortfall refuse): answered 503 before the provider is called, so it is undone and
// the reload's /callback runs the exchange instead of waiting out the lease for EXCHANGE_INTERRUPTED.

let broker: Broker
let deps: BrokerDeps
let plain: FlowStore
let lagging: boolean

beforeEach(async () => {
  broker = await memoryBroker({ store: { timeout: 200 } })
  const redis = new RedisMock() as unknown as Redis
  lagging = true
  // While `lagging`, no replica acknowledges anything.
  redis.wait = (async () => (lagging ? 0 : 1)) as Redis['wait']
  const store = testStore(redis, { replicas: 1, waitMs: 50, shortfall: 'refuse' })
  plain = testStore(redis)
  deps = { ...broker, store }
})
afterEach(async () => {
  lagging = false
  await broker.close()
})

/** A flow waiting for its callback, as /start leaves it, written where no replica is asked for. */
const awaiting = () => flowIn(plain, `exchange-test-${Date.now()}-${Math.random()}`, 'awaiting_callback')

describe("a /callback's move to exchanging that no replica acknowledged", () => {
  it('answers STORE_UNAVAILABLE with the flow waiting for its callback again: the next /callback takes the exchange', async () => {
    const entry = await awaiting()
    await expect(beginExchange(deps, entry)).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' })
    expect((await plain.get(entry.hash))?.progress).toBe('awaiting_callback')
    lagging = false
    const second = await beginExchange(deps, (await deps.store.get(entry.hash))!)
    expect('exchanging' in second && second.exchanging.progress).toBe('exchanging')
    if ('exchanging' in second) await second.stopRenewing()
    expect((await plain.get(entry.hash))?.progress).toBe('exchanging')
  })
})
