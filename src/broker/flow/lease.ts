import type { BrokerDeps } from '../deps.js'
import type { FlowEntry } from '../store/flow-store.js'

/**
 * The lease of a flow in `exchanging`: how long the request running the token exchange holds it
 * without renewing. The owner renews it every LEASE_RENEW_MS while it works (renewLease), so the
 * lease only has to outlast one renewal's write (store.timeout) and the clocks' disagreement: a dead
 * owner is seen about a second after its last renewal, however long the provider takes.
 */
export const leaseMs = (config: BrokerDeps['config']): number => config.store.timeout + 1000

/** How often the owner of an exchange renews its lease. */
export const LEASE_RENEW_MS = 250

/**
 * How much longer than their window of store.timeout the writes after an exchange wait out a Sentinel
 * failover (the store fenced, failover.ts): the switch measured 1.4–2.3 s from its first event until
 * the client was on the new master, so this covers a slow one about twice over.
 */
export const FAILOVER_WAIT_MS = 4000

/**
 * The longest a live exchange can hold a flow: every provider request (provider.timeout together),
 * the write that starts it, the writes that end it and their retries (settle.ts) with a failover
 * waited out, and one lease. A request held for the outcome never waits longer.
 */
export const exchangeBoundMs = (config: BrokerDeps['config']): number =>
  config.provider.timeout + 3 * config.store.timeout + FAILOVER_WAIT_MS + leaseMs(config)

/**
 * Whether a flow's exchange was interrupted: it is `exchanging` and its lease has passed. Judged by
 * this process's clock against the writer's: instances' clocks must agree to within half a second.
 */
export const leaseLapsed = (entry: FlowEntry, now = Date.now()): boolean =>
  entry.progress === 'exchanging' && (entry.leaseUntil ?? 0) <= now
