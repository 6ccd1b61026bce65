import { describe, expect, it, vi } from 'vitest'
import type { FlowPlugin, FlowRecord } from '../../../flows/contract.js'
import { brokerPerTest } from '../../../test/helpers/deps.js'
import { type StoreFaults, watchedStore } from '../../../test/helpers/watched-store.js'
import { brokerError } from '../../errors/index.js'
import type { BrokerDeps } from '../deps.js'
import type { FlowEvent } from '../events.js'
import type { Broker } from '../index.js'
import type { FlowEntry } from '../store/flow-store.js'
import type { PluginRegistry } from './plugins.js'
import { pollFlow } from './poll.js'

// The poll that ends a device flow completes it the way /callback does: the provider has answered
// (the device code is redeemed, it gives no tokens twice), so the completion is retried within
// store.timeout, a result for delivery by code is kept in the completion's round trip, and one the
// store never keeps fails the flow (RESULT_NOT_KEPT), told to the app once.

let broker: Broker
let events: FlowEvent[]
brokerPerTest({ store: { timeout: 200 } }, (b, e) => {
  broker = b
  events = e
})

const TOKENS = { access_token: 'at', token_type: 'Bearer' }
/** A polling plugin whose provider has decided: its next poll gives the tokens. */
const decided: FlowPlugin = { start: () => ({ deliver: {} }), poll: () => Promise.resolve({ deliver: TOKENS }) }

let n = 0
/** A flow awaiting its user's decision on another device; `record` adds to its record (a callback, a delivery). */
async function awaitingUser(record: FlowRecord = { auth_type: 'oauth' }): Promise<FlowEntry> {
  const now = Date.now()
  const entry: FlowEntry = {
    hash: `poll-test-${++n}`,
    plugin: 'polling',
    record,
    progress: 'awaiting_user',
    createdAt: now,
    expiresAt: now + 60_000,
    data: {},
  }
  await broker.store.create(entry)
  return entry
}

/** The broker with the polling plugin and its store's writes wrapped: `log` records when each is sent and answered. */
function watched(faults: StoreFaults = {}): { deps: BrokerDeps; log: string[] } {
  const { store, log } = watchedStore(broker.store, faults)
  const plugins = { get: () => Promise.resolve(decided) } as unknown as PluginRegistry
  return { deps: { ...broker, store, plugins }, log }
}

/** A store write that fails `times` times as a store that does not answer, then is carried out. */
function failing<A extends unknown[], T>(times: number, write: (...args: A) => Promise<T>): (...args: A) => Promise<T> {
  let left = times
  return (...args) => (left-- > 0 ? Promise.reject(brokerError('storeNotAnswering')) : write(...args))
}

/** Polls with fake timers, so that the retries within store.timeout pass at once. */
async function poll(deps: BrokerDeps, hash: string) {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] })
  // Held as a value until the timers have run: a poll that fails must not be an unhandled rejection meanwhile.
  const replied = pollFlow(deps, hash).then(
    (reply) => ({ reply }),
    (error: unknown) => ({ error }),
  )
  await vi.advanceTimersByTimeAsync(1000)
  const answer = await replied
  if ('error' in answer) throw answer.error
  return answer.reply
}

describe('the poll that completes a device flow', () => {
  it('retries the completion the store did not answer, and answers the tokens', async () => {
    const entry = await awaitingUser()
    const { deps } = watched({ advance: failing(2, broker.store.advance.bind(broker.store)) })
    const reply = await poll(deps, entry.hash)
    expect(reply).toMatchObject({ status: 200, json: TOKENS })
    expect((await broker.store.get(entry.hash))?.progress).toBe('completed')
    expect(events.map((e) => e.type)).toEqual(['token_exchanged', 'delivered'])
  })

  it('answers the tokens, with a warning, when the store never takes the completion within store.timeout', async () => {
    const entry = await awaitingUser()
    const { deps } = watched({ advance: () => Promise.reject(brokerError('storeNotAnswering')) })
    const warn = vi.spyOn(deps.log, 'warn')
    const reply = await poll(deps, entry.hash)
    expect(reply).toMatchObject({ status: 200, json: TOKENS })
    expect(warn).toHaveBeenCalledWith(expect.anything(), expect.stringMatching(/did not take the completed flow/))
    expect(JSON.stringify(warn.mock.calls)).not.toContain('"at"')
  })

  it('keeps a result for delivery by code in the round trip of the completion', async () => {
    const entry = await awaitingUser({ auth_type: 'oauth', callback: 'https://app.example/cb', delivery: 'code' })
    const { deps, log } = watched()
    const reply = await pollFlow(deps, entry.hash)
    expect(log.slice(0, 2).sort()).toEqual(['advance sent', 'putResult sent'])
    const code = new URL(String(reply.headers?.location)).searchParams.get('result')!
    expect(await broker.store.takeResult(code)).toEqual(TOKENS)
    expect((await broker.store.get(entry.hash))?.progress).toBe('completed')
    expect(events.map((e) => e.type)).toEqual(['token_exchanged', 'delivered'])
  })

  it('keeps a result for delivery by code that the store took only when tried again', async () => {
    const entry = await awaitingUser({ auth_type: 'oauth', callback: 'https://app.example/cb', delivery: 'code' })
    const { deps } = watched({ putResult: failing(2, broker.store.putResult.bind(broker.store)) })
    const reply = await poll(deps, entry.hash)
    const code = new URL(String(reply.headers?.location)).searchParams.get('result')!
    expect(await broker.store.takeResult(code)).toEqual(TOKENS)
  })

  it('fails the flow (RESULT_NOT_KEPT to the app, once) when the store never took the result', async () => {
    const entry = await awaitingUser({ auth_type: 'oauth', callback: 'https://app.example/cb', delivery: 'code' })
    const { deps } = watched({ putResult: () => Promise.reject(brokerError('storeNotAnswering')) })
    const reply = await poll(deps, entry.hash)
    const location = new URL(String(reply.headers?.location))
    expect(location.searchParams.get('broker_error')).toBe('RESULT_NOT_KEPT')
    expect(location.searchParams.get('result')).toBeNull()
    expect(await broker.store.get(entry.hash)).toMatchObject({ progress: 'failed', error: { code: 'RESULT_NOT_KEPT' } })
    expect(events.map((e) => e.type)).toEqual(['failed'])
    // The next poll hears the same failure; the flow is not run again.
    const again = await pollFlow(deps, entry.hash)
    expect(new URL(String(again.headers?.location)).searchParams.get('broker_error')).toBe('RESULT_NOT_KEPT')
    expect(events.map((e) => e.type)).toEqual(['failed'])
  })
})
