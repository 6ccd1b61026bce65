import { BrokerError, brokerError } from '../../errors/index.js'
import type { BrokerDeps } from '../deps.js'
import type { FlowEntry, Progress } from '../store/flow-store.js'
import { FAILOVER_WAIT_MS, exchangeBoundMs } from './lease.js'

/**
 * The writes after a token exchange. The provider has been called (a code redeemed, tokens issued):
 * a store that refuses a write, does not answer, or answers without the replicas store.replicas asks
 * for is tried again, and what the provider gave is not dropped. The writes of one exchange share one
 * window of retries, store.timeout from their first failure; while a Sentinel failover fences the
 * store, the window goes on until store.timeout after it lifts, FAILOVER_WAIT_MS longer at most. So
 * together they stay within exchangeBoundMs (lease.ts), which bounds how long a request waits for the
 * outcome.
 */
export interface RetryWindow {
  /** When retries stop: store.timeout after the first failure, or after a failover; unset until one fails. */
  until?: number
  /** The latest `until` a failover may push it to: FAILOVER_WAIT_MS past the first failure's window. */
  cap?: number
}

const RETRY_MS = 50

const unavailable = (err: unknown): err is BrokerError => err instanceof BrokerError && err.code === 'STORE_UNAVAILABLE'

/** Whether a store failure is a write the master carried out without the replicas' acknowledgement (WAIT short). */
const unreplicated = (err: unknown): boolean => unavailable(err) && err.details?.replicas !== undefined

/** `op`, tried again on STORE_UNAVAILABLE until the window closes; then its last failure is thrown. */
async function retried<T>(deps: BrokerDeps, window: RetryWindow, op: (again: boolean) => Promise<T>): Promise<T> {
  for (let again = false; ; again = true) {
    try {
      return await op(again)
    } catch (err) {
      if (!unavailable(err)) throw err
      const now = Date.now()
      window.until ??= now + deps.config.store.timeout
      window.cap ??= window.until + FAILOVER_WAIT_MS
      // A failover refuses every write until the client is on the new master (seconds): wait it out.
      if (deps.store.failingOver)
        window.until = Math.min(Math.max(window.until, now + deps.config.store.timeout), window.cap)
      if (now >= window.until) throw err
      await new Promise((r) => setTimeout(r, RETRY_MS))
    }
  }
}

/**
 * Moves a flow whose step has run to its end (completed or failed); 'unsettled' when the store did
 * not take it within the window: the caller delivers all the same, and the lease of an `exchanging`
 * flow ends it later. A write whose answer was lost and that landed reads as `next.progress` when tried
 * again. Another request that ended the flow first is refused (FLOW_FINISHED).
 */
export async function settle(
  deps: BrokerDeps,
  from: Progress,
  next: FlowEntry,
  window: RetryWindow = {},
): Promise<'ok' | 'unsettled'> {
  try {
    const res = await retried(deps, window, async (again) => {
      const found = await deps.store.advance(from, next)
      return again && found === next.progress ? 'ok' : found
    })
    if (res === 'ok') return 'ok'
    if (res === 'gone') throw brokerError('unknownHash')
    throw finished(res)
  } catch (err) {
    if (!unavailable(err)) throw err
    settleLater(deps, from, next, Date.now() + exchangeBoundMs(deps.config))
    return 'unsettled'
  }
}

const LATER_MS = 250

/**
 * An unsettled write tried again in the background until `until`: a store that is back by then
 * records the flow's end, so a reload meets FLOW_FINISHED rather than the lapsed lease failing the
 * flow once more (EXCHANGE_INTERRUPTED after the app got its tokens). The first write may have
 * landed unanswered: the flow then reads as `next.progress`, and that is the end too.
 */
function settleLater(deps: BrokerDeps, from: Progress, next: FlowEntry, until: number): void {
  const attempt = async () => {
    try {
      await deps.store.advance(from, next)
    } catch (err) {
      if (unavailable(err) && Date.now() + LATER_MS < until) setTimeout(() => void attempt(), LATER_MS).unref()
    }
  }
  setTimeout(() => void attempt(), LATER_MS).unref()
}

/**
 * Keeps a result for delivery by code, retried within the window: 'kept'; 'unreplicated' when the
 * master has it but fewer replicas than store.replicas acknowledged it (the code works unless a
 * failover comes first); 'lost' when the store refused it or did not answer.
 */
export async function keepResult(
  deps: BrokerDeps,
  keep: { code: string; result: Record<string, unknown> },
  window: RetryWindow,
): Promise<'kept' | 'unreplicated' | 'lost'> {
  // Once an attempt was carried out on the master, the result is there, whatever a later one met
  // (a WAIT queued behind another on the connection times out rather than answering short).
  let landed = false
  try {
    await retried(deps, window, async () => {
      try {
        await deps.store.putResult(keep.code, keep.result)
      } catch (err) {
        landed ||= unreplicated(err)
        throw err
      }
    })
    return 'kept'
  } catch (err) {
    if (!unavailable(err)) throw err
    return landed ? 'unreplicated' : 'lost'
  }
}

/** FLOW_FINISHED for a flow at its end, FLOW_STARTED for one still under way. */
export function finished(progress: string): BrokerError {
  return progress === 'completed' || progress === 'failed'
    ? brokerError('flowFinished', { progress })
    : brokerError('flowStarted')
}
