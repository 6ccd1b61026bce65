import { describe, expect, it } from 'vitest'
import type { FlowPlugin } from '../../../flows/contract.js'
import { brokerPerTest } from '../../../test/helpers/deps.js'
import type { BrokerDeps } from '../deps.js'
import type { Broker } from '../index.js'
import type { FlowEntry } from '../store/flow-store.js'
import type { PluginRegistry } from './plugins.js'
import { startFlow } from './start.js'

// The reload of a /start answered 503 during a failover finds its flow `started` by the claim that 503
// undoes: it waits for the undo (store.timeout at most), and is never told FLOW_STARTED while it runs.

let broker: Broker
brokerPerTest({ store: { timeout: 150 } }, (b) => void (broker = b))

let n = 0
/** A one-shot flow claimed already, as a failover's promoted replica has it: `started`; `was`, its value before. */
async function claimedAlready(): Promise<FlowEntry & { was: string }> {
  const now = Date.now()
  const entry: FlowEntry = {
    hash: `start-test-${++n}`,
    plugin: 'oauth_2_3-legged',
    record: { auth_type: 'oauth' },
    progress: 'stored',
    createdAt: now,
    expiresAt: now + 60_000,
    data: {},
  }
  await broker.store.create(entry)
  const was = (await broker.store.client.get(broker.store.flowKey(entry.hash)))!
  await broker.store.claim(entry.hash)
  return { ...entry, was }
}

/** The broker whose store is still undoing a claim of each flow, the undo settling as `undo` says. */
function undoing(undo: () => Promise<boolean>): BrokerDeps {
  const store = Object.create(broker.store) as typeof broker.store
  store.unclaimingOf = () => undo()
  return { ...broker, store }
}

describe('/start while the undo of its claim is under way', () => {
  it('answers STORE_UNAVAILABLE, not FLOW_STARTED, while the undo has not counted after store.timeout', async () => {
    const { hash } = await claimedAlready()
    const never = () => new Promise<boolean>(() => undefined)
    const started = Date.now()
    await expect(startFlow(undoing(never), { params: { hash }, cookies: {} })).rejects.toMatchObject({
      code: 'STORE_UNAVAILABLE',
      message: expect.stringContaining('being made usable again'),
    })
    expect(Date.now() - started).toBeGreaterThanOrEqual(140)
  })

  it('waits for an undo that counts while its own claim is under way, and starts the flow', async () => {
    const { hash, was } = await claimedAlready()
    // The undo's retry and the reload's claim reach the new master together: the undo settles (and its
    // registration is dropped) before the claim's answer is read.
    let undo: Promise<boolean> | undefined = (async () => {
      await new Promise((r) => setTimeout(r, 30))
      await broker.store.client.set(broker.store.flowKey(hash), was, 'PX', 60_000)
      undo = undefined
      return true
    })()
    const pending = undo
    const store = Object.create(broker.store) as typeof broker.store
    store.unclaimingOf = () => undo
    store.claim = (h) => broker.store.claim(h).then(async (found) => (await pending, found))
    const plugin: FlowPlugin = { start: (ctx) => ({ redirect: 'https://p.example/authorize', await: ctx.state }) }
    const plugins = { get: () => Promise.resolve(plugin) } as unknown as PluginRegistry
    const reply = await startFlow({ ...broker, store, plugins }, { params: { hash }, cookies: {} })
    expect(reply).toMatchObject({ status: 302, headers: { location: 'https://p.example/authorize' } })
    expect((await broker.store.get(hash))?.progress).toBe('awaiting_callback')
  })

  it('goes on as the flow stands once the undo ended without putting it back (the flow expired first)', async () => {
    const { hash } = await claimedAlready()
    await expect(
      startFlow(
        undoing(() => Promise.resolve(false)),
        { params: { hash }, cookies: {} },
      ),
    ).rejects.toMatchObject({ code: 'FLOW_STARTED' })
  })
})
