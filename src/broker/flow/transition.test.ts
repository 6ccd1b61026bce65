import { describe, expect, it } from 'vitest'
import { brokerPerTest } from '../../../test/helpers/deps.js'
import type { FlowEvent } from '../events.js'
import type { Broker } from '../index.js'
import type { FlowEntry } from '../store/flow-store.js'
import { claimFlow, createFlow, transition } from './transition.js'

let broker: Broker
let events: FlowEvent[]
brokerPerTest({}, (b, e) => {
  broker = b
  events = e
})

let n = 0
const newEntry = (): FlowEntry => {
  const now = Date.now()
  return {
    hash: `transition-test-hash-${++n}`,
    plugin: 'oauth_2_3-legged',
    record: { auth_type: 'oauth', authorize_url: 'https://provider.example/authorize' },
    progress: 'stored',
    createdAt: now,
    expiresAt: now + 60_000,
    data: { state: 's' },
  }
}

describe('transition', () => {
  it('moves a stored flow by compare-and-set and tells one event, of the progress it reached', async () => {
    const entry = newEntry()
    await createFlow(broker, entry, { reusable: false })
    expect(events.map((e) => e.type)).toEqual(['stored'])
    const { moved, entry: started } = await transition(broker, entry, 'started', { data: { state: 's', more: 1 } })
    expect(moved).toBe('ok')
    expect(events.map((e) => e.type)).toEqual(['stored', 'started'])
    expect(events[1]).toMatchObject({ hash: entry.hash, progress: 'started', provider: 'provider.example' })
    const read = await broker.store.get(entry.hash)
    expect(read).toMatchObject({ progress: 'started', data: { more: 1 } })
    expect(started.progress).toBe('started')
  })

  it('loses a stale compare-and-set: the progress found is answered, nothing is written or told', async () => {
    const entry = newEntry()
    await createFlow(broker, entry, { reusable: false })
    const first = await transition(broker, entry, 'started')
    expect(first.moved).toBe('ok')
    // `entry` still says stored: another request moved the flow on since it was read.
    const stale = await transition(broker, entry, 'failed', {
      error: { code: 'FAILED', error: 'server_error', description: 'late' },
    })
    expect(stale.moved).toBe('started')
    expect((await broker.store.get(entry.hash))?.progress).toBe('started')
    expect(events.map((e) => e.type)).toEqual(['stored', 'started'])
  })

  it('answers gone for a flow the store no longer has, and tells nothing', async () => {
    const { moved } = await transition(broker, newEntry(), 'started')
    expect(moved).toBe('gone')
    expect(events).toEqual([])
  })

  it('tells no event for a move that stays (a lease renewed, data saved)', async () => {
    const entry = newEntry()
    await createFlow(broker, entry, { reusable: false })
    const { moved } = await transition(broker, entry, 'stored', { data: { state: 's', saved: true } })
    expect(moved).toBe('ok')
    expect(events.map((e) => e.type)).toEqual(['stored'])
  })

  it("tells a reusable flow's move without writing it", async () => {
    const entry = newEntry()
    await createFlow(broker, entry, { reusable: true })
    const { moved } = await transition(broker, entry, 'completed', {}, { told: true })
    expect(moved).toBe('ok')
    expect((await broker.store.get(entry.hash))?.progress).toBe('stored')
    expect(events.map((e) => e.type)).toEqual(['stored', 'token_exchanged'])
  })

  it("tells the failure's code with a failed flow", async () => {
    const entry = newEntry()
    await createFlow(broker, entry, { reusable: false })
    const error = { code: 'PROVIDER_ERROR' as const, error: 'invalid_grant', description: 'no' }
    await transition(broker, entry, 'failed', { error })
    expect(events.at(-1)).toMatchObject({ type: 'failed', progress: 'failed', error: 'PROVIDER_ERROR' })
  })
})

describe('claimFlow', () => {
  it('moves a one-shot flow from stored to started once, telling it once; a second claim moves and tells nothing', async () => {
    const entry = newEntry()
    await createFlow(broker, entry, { reusable: false })
    expect((await claimFlow(broker, entry.hash))?.entry.progress).toBe('stored')
    expect((await claimFlow(broker, entry.hash))?.entry.progress).toBe('started')
    expect(events.map((e) => e.type)).toEqual(['stored', 'started'])
  })

  it('tells started and redirected for a flow whose first step ran at /store', async () => {
    const entry = newEntry()
    await createFlow(broker, entry, { reusable: false, redirect: 'https://provider.example/authorize?x=1' })
    await claimFlow(broker, entry.hash)
    expect((await broker.store.get(entry.hash))?.progress).toBe('awaiting_callback')
    expect(events.map((e) => [e.type, e.progress])).toEqual([
      ['stored', 'stored'],
      ['started', 'started'],
      ['redirected', 'awaiting_callback'],
    ])
  })
})

describe('where flow events come from', () => {
  it('only this module publishes them: every other file changes a flow through transition', async () => {
    const { readdirSync, readFileSync } = await import('node:fs')
    const { join } = await import('node:path')
    const root = join(import.meta.dirname, '..')
    const publishers = (readdirSync(root, { recursive: true }) as string[])
      .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))
      .filter((f) => /\bevents\.publish\(/.test(readFileSync(join(root, f), 'utf8')))
    expect(publishers).toEqual(['flow/transition.ts'])
  })
})
