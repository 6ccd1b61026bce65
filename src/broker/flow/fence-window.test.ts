import RedisMock from 'ioredis-mock'
import type { Redis } from 'ioredis'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { memoryBroker } from '../../../test/helpers/deps.js'
import { exchangingFlow } from '../../../test/helpers/exchanging.js'
import { testStore } from '../../../test/helpers/flow-store.js'
import type { BrokerDeps } from '../deps.js'
import type { Broker } from '../index.js'
import { awaitOutcome } from './hold.js'
import { exchangeBoundMs, leaseMs } from './lease.js'
import { afterStep } from './step.js'

// Issue 33's finding: a Sentinel failover fences the store (failover.ts) for 1.4–2.3 s, longer than the
// writes after a token exchange used to retry (store.timeout, 1 s). The fence here is a fake one, moved
// by fake timers: the clock is the test's, never the wall's.

type FakeFence = { fenced: boolean; epoch: number; liftedAt?: number }

let broker: Broker
let fence: FakeFence
let deps: BrokerDeps

beforeEach(async () => {
  broker = await memoryBroker({ store: { timeout: 1000 } })
  fence = { fenced: false, epoch: 0 }
  const store = testStore(new RedisMock() as unknown as Redis, { fence })
  deps = { ...broker, store }
})
afterEach(async () => {
  vi.useRealTimers()
  await broker.close()
})

let n = 0
/** A flow in `exchanging` whose callback delivers by code, written while the store is not fenced. */
const exchanging = (leaseUntil?: number) => exchangingFlow(deps.store, `fence-window-test-${++n}`, leaseUntil)

const TOKENS = { access_token: 'at', token_type: 'Bearer' }

describe('the writes after an exchange, during a Sentinel failover', () => {
  it('wait out a fence of 1.5 s (store.timeout 1 s): the result is kept and its code delivered', async () => {
    const entry = await exchanging()
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] })
    fence.fenced = true
    fence.epoch++
    setTimeout(() => {
      fence.fenced = false
      fence.liftedAt = Date.now()
    }, 1500)
    const replied = afterStep(deps, entry, { deliver: TOKENS }, false)
    await vi.advanceTimersByTimeAsync(3000)
    const reply = await replied
    const location = new URL(String(reply.headers?.location))
    expect(location.searchParams.get('error')).toBeNull()
    const code = location.searchParams.get('result')!
    expect(await deps.store.takeResult(code)).toEqual(TOKENS)
    expect((await deps.store.get(entry.hash))?.progress).toBe('completed')
  })

  it('a fence that never lifts ends within exchangeBoundMs: RESULT_NOT_KEPT to the app', async () => {
    const entry = await exchanging()
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] })
    fence.fenced = true
    fence.epoch++
    const began = Date.now()
    let ended = 0
    const replied = afterStep(deps, entry, { deliver: TOKENS }, false).finally(() => (ended = Date.now()))
    await vi.advanceTimersByTimeAsync(exchangeBoundMs(deps.config))
    const reply = await replied
    expect(ended).toBeGreaterThan(began)
    expect(ended - began).toBeLessThanOrEqual(exchangeBoundMs(deps.config))
    const location = new URL(String(reply.headers?.location))
    expect(location.searchParams.get('broker_error')).toBe('RESULT_NOT_KEPT')
  })
})

describe('a request held for the outcome, after a Sentinel failover', () => {
  it('does not fail as interrupted an exchange whose lease lapsed while the store was fenced', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] })
    // The owner could not renew its lease while fenced; the fence lifted a moment ago.
    const entry = await exchanging(Date.now() - 1)
    fence.liftedAt = Date.now()
    const outcome = awaitOutcome(deps, entry)
    // The owner's renewal and then its end arrive within a lease of the lift.
    setTimeout(
      () => void deps.store.advance('exchanging', { ...entry, progress: 'completed' }),
      leaseMs(deps.config) / 2,
    )
    await vi.advanceTimersByTimeAsync(leaseMs(deps.config))
    expect(await outcome).toMatchObject({ interrupted: false, entry: { progress: 'completed' } })
  })

  it('fails it as interrupted once a lease has passed since the fence lifted', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] })
    const entry = await exchanging(Date.now() - 1)
    fence.liftedAt = Date.now()
    const outcome = awaitOutcome(deps, entry)
    await vi.advanceTimersByTimeAsync(leaseMs(deps.config) + 500)
    expect(await outcome).toMatchObject({ interrupted: true, entry: { progress: 'failed' } })
  })
})
