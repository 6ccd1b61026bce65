import { brokerError } from '../../errors/index.js'
import type { BrokerDeps } from '../deps.js'
import type { Reply } from './reply.js'
import type { FlowEntry } from '../store/flow-store.js'
import { heldUntilOutcome } from './hold.js'
import { LEASE_RENEW_MS, leaseMs } from './lease.js'
import { finished } from './settle.js'
import { transition } from './transition.js'

/**
 * Moves a flow waiting for its callback to `exchanging`, holding it with a lease (lease.ts) that is
 * renewed until `stopRenewing` is called, for the token exchange. When another request of the same
 * browser started the exchange a moment before, this one is held for its outcome instead (hold.ts):
 * the answer is `held` (`again`: see heldUntilOutcome).
 */
export async function beginExchange(
  deps: BrokerDeps,
  entry: FlowEntry,
  again?: () => Promise<Reply>,
): Promise<{ exchanging: FlowEntry; stopRenewing: () => Promise<void> } | { held: Reply }> {
  // Only from `awaiting_callback`: a flow whose first step has not redirected yet has no callback to take.
  if (entry.progress !== 'awaiting_callback') throw finished(entry.progress)
  const { moved, entry: exchanging } = await transition(deps, entry, 'exchanging', {
    leaseUntil: Date.now() + leaseMs(deps.config),
  })
  if (moved === 'ok') return { exchanging, stopRenewing: renewLease(deps, exchanging) }
  const now = moved === 'exchanging' ? await deps.store.get(entry.hash) : undefined
  if (now?.progress === 'exchanging') return { held: await heldUntilOutcome(deps, now, true, again) }
  throw moved === 'gone' ? brokerError('unknownHash') : finished(now?.progress ?? moved)
}

/**
 * Renews an `exchanging` flow's lease every LEASE_RENEW_MS (a compare-and-set from `exchanging`, so a
 * renewal never undoes the flow's end) until the returned stop is called; stop waits for a renewal in
 * flight. A renewal that fails is not retried: the next one comes LEASE_RENEW_MS later.
 */
function renewLease(deps: BrokerDeps, entry: FlowEntry): () => Promise<void> {
  let inFlight: Promise<unknown> | undefined
  let stopped = false
  const timer = setInterval(() => {
    if (inFlight || stopped) return
    inFlight = transition(deps, entry, 'exchanging', { leaseUntil: Date.now() + leaseMs(deps.config) })
      .then(({ moved }) => {
        if (moved !== 'ok') stopped = true
      })
      .catch(() => undefined)
      .finally(() => (inFlight = undefined))
  }, LEASE_RENEW_MS)
  timer.unref()
  return async () => {
    stopped = true
    clearInterval(timer)
    await inFlight
  }
}
