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

/** A result for delivery by code, kept under its one-time code with the flow's completion. */
export interface ResultToKeep {
  code: string
  result: Record<string, unknown>
}

/**
 * What settle came to. `moved`: 'ok', or 'unsettled' when the store did not take the flow's move
 * within the window (the caller delivers all the same, and the lease of an `exchanging` flow ends it
 * later). `kept`, with a result to keep: 'kept'; 'unreplicated' when the master has it but fewer
 * replicas than store.replicas acknowledged it (the code works unless a failover comes first); 'lost'
 * when the store refused it or did not answer: the caller fails the flow instead of delivering a dead code.
 */
export interface Settled {
  moved: 'ok' | 'unsettled'
  kept?: 'kept' | 'unreplicated' | 'lost'
}

/**
 * Moves a flow whose step has run to its end (completed or failed), and keeps its result for delivery
 * by code, both in one round trip: the two writes leave in the same turn, so they share one socket
 * write (and one WAIT with store.replicas), and each is tried again within the window until it is
 * taken. `told`: the move is not written (a reusable flow), only the result. A write whose answer was
 * lost and that landed reads as `next.progress` when tried again. Another request that ended the flow
 * first is refused (FLOW_FINISHED).
 */
export async function settle(
  deps: BrokerDeps,
  from: Progress,
  next: FlowEntry,
  window: RetryWindow = {},
  opts: { keep?: ResultToKeep; told?: boolean } = {},
): Promise<Settled> {
  const { keep } = opts
  let moved = opts.told === true
  let kept = !keep
  // Once an attempt was carried out on the master, the result is there, whatever a later one met
  // (a WAIT queued behind another on the connection times out rather than answering short).
  let landed = false
  // A result the store refused outright (the embedded store full) is not tried again: it is lost.
  let refused = false
  try {
    await retried(deps, window, async (again) => {
      const [result, move] = await Promise.allSettled([
        kept || refused ? undefined : deps.store.putResult(keep!.code, keep!.result),
        moved ? undefined : deps.store.advance(from, next),
      ])
      if (result.status === 'fulfilled') kept ||= !refused
      else if (unavailable(result.reason)) landed ||= unreplicated(result.reason)
      else refused = true
      if (move.status === 'rejected') throw move.reason
      const found = move.value
      if (found === 'ok' || (found !== undefined && again && found === next.progress)) moved = true
      else if (found === 'gone') throw brokerError('unknownHash')
      else if (found !== undefined) throw finished(found)
      if (result.status === 'rejected' && !refused) throw result.reason
    })
  } catch (err) {
    if (!unavailable(err)) throw err
  }
  const keptAs = keep ? (kept ? 'kept' : landed ? 'unreplicated' : 'lost') : undefined
  if (moved) return { moved: 'ok', kept: keptAs }
  // A lost result fails the flow (from where it stands): its completion is not written later.
  if (keptAs !== 'lost') settleLater(deps, from, next, Date.now() + exchangeBoundMs(deps.config))
  return { moved: 'unsettled', kept: keptAs }
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

/** FLOW_FINISHED for a flow at its end, FLOW_STARTED for one still under way. */
export function finished(progress: string): BrokerError {
  return progress === 'completed' || progress === 'failed'
    ? brokerError('flowFinished', { progress })
    : brokerError('flowStarted')
}
