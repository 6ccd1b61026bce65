import type { FlowEntry, FlowStore } from '../../src/broker/store/flow-store.js'

const RECORD = { auth_type: 'oauth', callback: 'https://app.example/cb' }

/**
 * A code-flow record written to `store` and moved on to `progress` with `patch` (a lease, say), as the
 * broker's steps leave it; `record`: the flow's record (an app's callback by default).
 */
export async function flowIn(
  store: FlowStore,
  hash: string,
  progress: FlowEntry['progress'],
  patch: Partial<FlowEntry> = {},
  record: FlowEntry['record'] = RECORD,
): Promise<FlowEntry> {
  const now = Date.now()
  const stored: FlowEntry = {
    hash,
    plugin: 'oauth_2_3-legged',
    record,
    progress: 'stored',
    createdAt: now,
    expiresAt: now + 60_000,
    data: { state: 's' },
  }
  await store.create(stored)
  const next: FlowEntry = { ...stored, ...patch, progress }
  if ((await store.advance('stored', next)) !== 'ok') throw new Error(`the flow ${hash} did not move to ${progress}`)
  return next
}

/**
 * A flow moved to `exchanging`, as /callback leaves it for its token exchange: a code-flow record whose
 * result is delivered by code, its lease until `leaseUntil`.
 */
export function exchangingFlow(store: FlowStore, hash: string, leaseUntil = Date.now() + 2000): Promise<FlowEntry> {
  return flowIn(store, hash, 'exchanging', { leaseUntil }, { ...RECORD, delivery: 'code' })
}
