import type { BrokerDeps } from '../deps.js'
import type { FlowEntry } from '../store/flow-store.js'

/**
 * The lease of a flow in `exchanging`: how long the request running the token exchange holds it.
 * That request's provider calls share provider.timeout (context.ts), its two store writes take
 * store.timeout each and the last one is retried for store.timeout more (run.ts `settle`): past all
 * of that and a second, the request is gone (its process was killed), not slow.
 */
export const leaseMs = (config: BrokerDeps['config']): number =>
  config.provider.timeout + 3 * config.store.timeout + 1000

/**
 * Whether a flow's exchange was interrupted: it is `exchanging` and its lease has passed. Judged by
 * this process's clock against the writer's: instances' clocks must agree to within the second of margin.
 */
export const leaseLapsed = (entry: FlowEntry, now = Date.now()): boolean =>
  entry.progress === 'exchanging' && (entry.leaseUntil ?? 0) <= now
