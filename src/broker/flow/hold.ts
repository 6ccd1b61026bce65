import { brokerError, ERRORS } from '../../errors/index.js'
import type { BrokerDeps } from '../deps.js'
import type { FlowEntry, FlowFailure } from '../store/flow-store.js'
import { deliverError } from './deliver.js'
import type { Reply } from './reply.js'
import { exchangeBoundMs, leaseLapsed, leaseMs } from './lease.js'
import { finished } from './settle.js'
import { transition } from './transition.js'

/**
 * Requests for a flow whose token exchange is under way: a reload of /callback, the start URL opened
 * again, /hash-check. Each is held until the outcome instead of refused: the flow's end as its owner
 * wrote it, or, once the owner's lease lapsed (its process died), EXCHANGE_INTERRUPTED written by
 * whichever held request gets there first (a compare-and-set: the app hears of the flow once).
 *
 * A browser's request can take over what the owner would have answered: an owner whose browser
 * dropped its request (a reload aborts the one before) keeps its answer for store.expire, and the
 * first request of the same browser (binding cookie) takes it, once (GETDEL).
 */

/** How often a held request reads the flow again. */
const HOLD_POLL_MS = 100

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** An `exchanging` flow whose lease has passed, failed as EXCHANGE_INTERRUPTED, or undefined when another request moved it first. */
export async function markInterrupted(deps: BrokerDeps, entry: FlowEntry): Promise<FlowEntry | undefined> {
  const error: FlowFailure = {
    code: 'EXCHANGE_INTERRUPTED',
    error: 'server_error',
    description: brokerError('exchangeInterrupted').message,
  }
  // Compare-and-set from `exchanging`: of every request that finds the lease passed, one fails the flow.
  // One the master made without the replicas store.replicas asks for (a replica lagging) counts: the flow
  // is failed there, so a 503 now would leave the next request FLOW_FINISHED and the app never told.
  let short = false
  const { moved, entry: failed } = await transition(deps, entry, 'failed', { error }, { short: () => (short = true) })
  if (moved !== 'ok') return undefined
  if (short)
    deps.log.warn(
      { plugin: entry.plugin },
      'the interrupted flow was failed without the replicas store.replicas asks for; telling the app all the same',
    )
  deps.log.warn({ plugin: entry.plugin }, 'flow failed: its token exchange was interrupted')
  return failed
}

/**
 * Waits while `entry` is `exchanging`: the flow as it ended, with `interrupted` when this request
 * failed it because the owner's lease lapsed. Bounded by the longest a live exchange can take.
 */
export async function awaitOutcome(
  deps: BrokerDeps,
  entry: FlowEntry,
): Promise<{ entry: FlowEntry; interrupted: boolean }> {
  const until = Date.now() + exchangeBoundMs(deps.config)
  let current = entry
  for (;;) {
    if (current.progress !== 'exchanging') return { entry: current, interrupted: false }
    // An owner cannot renew its lease while a failover refuses writes: give it a lease after the failover.
    if (leaseLapsed(current) && !deps.store.failedOverWithin(leaseMs(deps.config))) {
      const failed = await markInterrupted(deps, current)
      if (failed) return { entry: failed, interrupted: true }
    } else if (Date.now() >= until) throw brokerError('flowStarted')
    else await sleep(HOLD_POLL_MS)
    const read = await deps.store.get(current.hash)
    if (!read) throw brokerError('unknownHash')
    current = read
  }
}

/**
 * /callback or /start for a flow under exchange, held until the outcome. `browser`: the request
 * carries the flow's binding cookie, so it may take over the owner's kept answer (tokens included).
 * `again`: what a /callback does when the exchange it waited for was undone before it began.
 */
export async function heldUntilOutcome(
  deps: BrokerDeps,
  entry: FlowEntry,
  browser: boolean,
  again?: () => Promise<Reply>,
): Promise<Reply> {
  const outcome = await awaitOutcome(deps, entry)
  if (outcome.interrupted) return deliverError(outcome.entry, outcome.entry.error!, ERRORS.EXCHANGE_INTERRUPTED.status)
  // The exchange this request waited for never began: its move to `exchanging` did not count and was
  // undone (store/undo.ts; the provider was never called). The callback runs again, as if it came now.
  if (outcome.entry.progress === 'awaiting_callback' && again) return again()
  // The owner keeps its answer right after it writes the flow's end: give it that long to arrive.
  const kept = browser ? await replayOf(deps, entry.hash, deps.config.store.timeout + 500) : undefined
  if (kept) return kept
  throw finished(outcome.entry.progress)
}

/** The answer the owner kept for this flow's browser, waiting up to `ms` for it; undefined when there is none. */
export async function replayOf(deps: BrokerDeps, hash: string, ms = 0): Promise<Reply | undefined> {
  const until = Date.now() + ms
  for (;;) {
    const kept = await deps.store.takeReplay(hash)
    if (kept) return kept as unknown as Reply
    if (Date.now() >= until) return undefined
    await sleep(HOLD_POLL_MS)
  }
}

/** The owner of an exchange whose browser dropped the request: its answer kept for the browser's next one. */
export async function keepForReplay(deps: BrokerDeps, hash: string, reply: Reply): Promise<void> {
  try {
    await deps.store.putReplay(hash, { ...reply }, deps.config.store.expire * 1000)
  } catch {
    // The browser is gone either way; its next request meets FLOW_FINISHED.
    deps.log.warn('the store did not keep the answer of an exchange whose browser left')
  }
}
