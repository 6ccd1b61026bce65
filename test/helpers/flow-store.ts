import type { Redis } from 'ioredis'
import RedisMock from 'ioredis-mock'
import { newId } from '../../src/broker/ids.js'
import { type FlowEntry, FlowStore, type FlowStoreOptions } from '../../src/broker/store/flow-store.js'

/** The store secret the flow store tests seal with. */
export const SECRETS = ['a store secret of at least thirty-two characters']

/**
 * A flow store on `client` as the tests make one: store.expire 60 s, store.callbackWait 600 s, SECRETS;
 * `opts` adds to that or replaces it (store.replicas, a fence, a ledger…).
 */
export function testStore(client: Redis, opts: Partial<FlowStoreOptions> = {}): FlowStore {
  return new FlowStore(client, { expireSeconds: 60, callbackWaitSeconds: 600, secrets: SECRETS, ...opts })
}

/**
 * The two stores a flow store's behaviour holds on, for describe.each: a real Redis (`client()`, read when a
 * test makes its store) and the embedded store, whose Lua runs elsewhere.
 */
export function bothStores(client: () => Redis): Array<[string, () => FlowStore]> {
  return [
    ['real Redis', () => testStore(client())],
    ['embedded store', () => testStore(new RedisMock() as unknown as Redis)],
  ]
}

/** A new OAuth 2 flow as /store writes it, living 60 s from now, under a hash of its own. */
export function newEntry(): FlowEntry {
  const now = Date.now()
  return {
    hash: newId(),
    plugin: 'oauth_2_3-legged',
    record: { auth_type: 'oauth', client_id: 'c' },
    progress: 'stored',
    createdAt: now,
    expiresAt: now + 60_000,
    data: {},
  }
}
