import RedisMock from 'ioredis-mock'
import type { Redis } from 'ioredis'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { memoryBroker } from '../../../test/helpers/deps.js'
import { flowIn } from '../../../test/helpers/exchanging.js'
import { testStore } from '../../../test/helpers/flow-store.js'
import type { BrokerDeps } from '../deps.js'
import type { Broker } from '../index.js'
import type { FlowEntry, FlowStore } from '../store/flow-store.js'
import { awaitOutcome, heldUntilOutcome } from './hold.js'
import type { Reply } from './reply.js'

// A request held for the outcome of an exchange whose owner died, while the store carries out writes
// without the replicas store.replicas asks for (a replica lagging in steady state: WAIT answers 0, and
// store.replicaShortfall refuses that). The compare-and-set that fails the flow runs on the master all
// the same: answered 503, the flow would be failed there and the next request would meet FLOW_FINISHED,
// the app never told.

let broker: Broker
let redis: Redis
let deps: BrokerDeps
let plain: FlowStore

beforeEach(async () => {
  broker = await memoryBroker({ store: { timeout: 200 } })
  redis = new RedisMock() as unknown as Redis
  // No replica acknowledges anything.
  redis.wait = (async () => 0) as Redis['wait']
  const store = testStore(redis, { replicas: 1, waitMs: 50, shortfall: 'refuse' })
  plain = testStore(redis)
  deps = { ...broker, store }
})
afterEach(async () => {
  await broker.close()
})

/** A flow in `exchanging` whose owner's lease lapsed, written where no replica is asked for. */
const orphaned = () =>
  flowIn(plain, `hold-test-${Date.now()}-${Math.random()}`, 'exchanging', { leaseUntil: Date.now() - 1 })

describe('a held request whose failure of the flow no replica acknowledged', () => {
  it('tells the app EXCHANGE_INTERRUPTED all the same (the flow is failed on the master), rather than a 503 and then FLOW_FINISHED', async () => {
    const entry = await orphaned()
    const outcome = await awaitOutcome(deps, entry)
    expect(outcome).toMatchObject({ interrupted: true, entry: { progress: 'failed' } })
    expect(outcome.entry.error?.code).toBe('EXCHANGE_INTERRUPTED')
    expect((await plain.get(entry.hash))?.progress).toBe('failed')
  })

  it('a second held request, after the first failed it, is not told to deliver again', async () => {
    const entry = await orphaned()
    await awaitOutcome(deps, entry)
    // It read the flow `exchanging` before the first one's write: its compare-and-set finds it failed.
    await expect(awaitOutcome(deps, entry)).resolves.toMatchObject({ interrupted: false })
  })
})

describe('a held /callback whose exchange was undone before it began', () => {
  /** A flow in `exchanging` with a live lease: another request's move, about to be undone. */
  async function exchanging(): Promise<FlowEntry> {
    const entry = await orphaned()
    const live: FlowEntry = { ...entry, leaseUntil: Date.now() + 60_000 }
    expect(await plain.advance('exchanging', live)).toBe('ok')
    return live
  }

  it('runs the callback again (the provider was never called) instead of answering FLOW_STARTED', async () => {
    const entry = await exchanging()
    const answer = { status: 302, headers: { location: 'https://app.example/cb?code=x' } }
    let ran = 0
    const held = heldUntilOutcome(deps, entry, true, async () => {
      ran++
      return answer as unknown as Reply
    })
    // The move's undo: the flow waits for its callback again.
    expect(await plain.advance('exchanging', { ...entry, progress: 'awaiting_callback', leaseUntil: undefined })).toBe(
      'ok',
    )
    await expect(held).resolves.toBe(answer)
    expect(ran).toBe(1)
  })

  it('without a second try (the request already is one) it answers FLOW_STARTED', async () => {
    const entry = await exchanging()
    const held = heldUntilOutcome(deps, entry, true)
    expect(await plain.advance('exchanging', { ...entry, progress: 'awaiting_callback', leaseUntil: undefined })).toBe(
      'ok',
    )
    await expect(held).rejects.toMatchObject({ code: 'FLOW_STARTED' })
  })
})
