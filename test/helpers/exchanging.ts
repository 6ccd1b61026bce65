import type { FlowEntry, FlowStore } from '../../src/broker/store/flow-store.js'

/**
 * A flow written to `store` and moved to `exchanging`, as /callback leaves it for its token exchange:
 * a code-flow record whose result is delivered by code, its lease until `leaseUntil`.
 */
export async function exchangingFlow(
  store: FlowStore,
  hash: string,
  leaseUntil = Date.now() + 2000,
): Promise<FlowEntry> {
  const now = Date.now()
  const stored: FlowEntry = {
    hash,
    plugin: 'oauth_2_3-legged',
    record: { auth_type: 'oauth', callback: 'https://app.example/cb', delivery: 'code' },
    progress: 'stored',
    createdAt: now,
    expiresAt: now + 60_000,
    data: { state: 's' },
  }
  await store.create(stored)
  const next: FlowEntry = { ...stored, progress: 'exchanging', leaseUntil }
  if ((await store.advance('stored', next)) !== 'ok') throw new Error(`the flow ${hash} did not move to exchanging`)
  return next
}
