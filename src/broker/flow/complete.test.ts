import { describe, expect, it, vi } from 'vitest'
import { brokerPerTest } from '../../../test/helpers/deps.js'
import { exchangingFlow } from '../../../test/helpers/exchanging.js'
import { watchedStore } from '../../../test/helpers/watched-store.js'
import { brokerError } from '../../errors/index.js'
import type { BrokerDeps } from '../deps.js'
import type { FlowEvent } from '../events.js'
import type { Broker } from '../index.js'
import type { FlowStore } from '../store/flow-store.js'
import { afterStep } from './step.js'

// The end of a /callback that delivers by code: the result is kept in the same round trip as the flow's
// completion (both writes leave in one turn), and a result the store does not keep fails the flow.

let broker: Broker
let events: FlowEvent[]
brokerPerTest({ store: { timeout: 200 } }, (b, e) => {
  broker = b
  events = e
})

let n = 0
/** A flow in `exchanging` whose callback delivers by code. */
const exchanging = () => exchangingFlow(broker.store, `complete-test-${++n}`)

/** The broker with its store's putResult and advance wrapped: `log` records when each is sent and answered. */
function watched(putResult?: FlowStore['putResult']): { deps: BrokerDeps; log: string[] } {
  const { store, log } = watchedStore(broker.store, { putResult })
  return { deps: { ...broker, store }, log }
}

const TOKENS = { access_token: 'at', token_type: 'Bearer' }

describe('completing a flow that delivers by code', () => {
  it('keeps the result in the round trip of the completion: both writes are sent before either is answered', async () => {
    const entry = await exchanging()
    const { deps, log } = watched()
    const reply = await afterStep(deps, entry, { deliver: TOKENS }, false)
    expect(log.slice(0, 2).sort()).toEqual(['advance sent', 'putResult sent'])
    const code = new URL(String(reply.headers?.location)).searchParams.get('result')!
    expect(await broker.store.takeResult(code)).toEqual(TOKENS)
    expect((await broker.store.get(entry.hash))?.progress).toBe('completed')
    expect(events.map((e) => e.type)).toEqual(['token_exchanged', 'delivered'])
  })

  it('fails the flow (RESULT_NOT_KEPT to the app) when the store never took the result, though it took the completion', async () => {
    const entry = await exchanging()
    const { deps } = watched(() => Promise.reject(brokerError('storeNotAnswering')))
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] })
    const replied = afterStep(deps, entry, { deliver: TOKENS }, false)
    await vi.advanceTimersByTimeAsync(1000)
    const reply = await replied
    const location = new URL(String(reply.headers?.location))
    expect(location.searchParams.get('broker_error')).toBe('RESULT_NOT_KEPT')
    expect(location.searchParams.get('result')).toBeNull()
    expect(await broker.store.get(entry.hash)).toMatchObject({ progress: 'failed', error: { code: 'RESULT_NOT_KEPT' } })
    // The app hears of the flow once: its failure, never a completion first.
    expect(events.map((e) => e.type)).toEqual(['failed'])
  })

  it('fails the flow when the store refuses the result outright (full), without trying it again', async () => {
    const entry = await exchanging()
    let tries = 0
    const { deps } = watched(() => {
      tries++
      return Promise.reject(brokerError('storeFull'))
    })
    const reply = await afterStep(deps, entry, { deliver: TOKENS }, false)
    expect(new URL(String(reply.headers?.location)).searchParams.get('broker_error')).toBe('RESULT_NOT_KEPT')
    expect(tries).toBe(1)
    expect((await broker.store.get(entry.hash))?.progress).toBe('failed')
  })
})
