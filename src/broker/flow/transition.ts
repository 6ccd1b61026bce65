import type { FlowRecord } from '../../../flows/contract.js'
import { urlParts } from '../../../flows/lib/urls.js'
import type { BrokerDeps } from '../deps.js'
import type { FlowEventType } from '../events.js'
import type { Claimed, FlowEntry, Progress } from '../store/flow-store.js'
import { type ResultToKeep, type RetryWindow, settle } from './settle.js'

/**
 * A flow's life in the store, and the events that tell it: every change of a flow's progress goes
 * through `transition` (a compare-and-set, then its event), its creation through `createFlow`, and
 * /start's claim through `claimFlow`. Nothing else publishes a flow event but `delivered`.
 */

/** The event a flow's arrival at each progress is told as; a move that stays (a lease renewed, data saved) tells none. */
const EVENT_OF: Record<Progress, FlowEventType> = {
  stored: 'stored',
  awaiting_user: 'stored',
  started: 'started',
  awaiting_callback: 'redirected',
  exchanging: 'callback',
  completed: 'token_exchanged',
  failed: 'failed',
}

/** What a transition changes besides the progress. */
export type FlowPatch = Partial<Pick<FlowEntry, 'data' | 'error' | 'leaseUntil'>>

export interface TransitionOptions {
  /**
   * After the provider answered: the write is retried within this window, and a store that does not take
   * it is written again in the background while the caller goes on ('unsettled', see settle.ts); another
   * request that ended the flow first is FLOW_FINISHED, one that expired UNKNOWN_HASH.
   */
  window?: RetryWindow
  /** A reusable flow (a signing helper) keeps the progress it was stored with: the move is told, never written. */
  told?: boolean
  /** A move the master made but fewer replicas acknowledged is told here and counts (FlowStore's `advance`). */
  short?: (acked: number) => void
  /** With `window`: the result of a delivery by code, kept in the same round trip as the move (settle.ts). */
  keep?: ResultToKeep
  /** The delivery mode of the result the move completes with: `delivered` is told after the move's event. */
  delivery?: string
}

/** What a transition came to: 'ok' (moved), 'unsettled' (see `window`), 'gone', or the progress another request moved it to first. */
export type Moved = 'ok' | 'unsettled' | 'gone' | Progress

/**
 * Moves `entry` from its progress to `to` with `patch`, by compare-and-set on the stored flow, and
 * tells the move's event once it is made (or, with a window, handed to the background). Returns
 * what it came to and the entry as moved, and with `keep` how the result was kept: a result 'lost'
 * tells nothing, as the caller fails the flow instead.
 */
export async function transition(
  deps: BrokerDeps,
  entry: FlowEntry,
  to: Progress,
  patch: FlowPatch = {},
  opts: TransitionOptions = {},
): Promise<{ moved: Moved; entry: FlowEntry; kept?: 'kept' | 'unreplicated' | 'lost' }> {
  const next: FlowEntry = { ...entry, ...patch, progress: to }
  const window = opts.window ?? (opts.keep ? {} : undefined)
  const { moved, kept } = window
    ? await settle(deps, entry.progress, next, window, opts)
    : {
        moved: opts.told ? ('ok' as const) : await deps.store.advance(entry.progress, next, opts.short),
        kept: undefined,
      }
  if ((moved === 'ok' || moved === 'unsettled') && kept !== 'lost') {
    if (to !== entry.progress) announce(deps, next)
    if (opts.delivery) delivered(deps, next, opts.delivery)
  }
  return { moved, entry: next, kept }
}

/** Stores a new flow (the store's `create`) and tells it. */
export async function createFlow(
  deps: BrokerDeps,
  entry: FlowEntry,
  opts: { reusable: boolean; redirect?: string },
): Promise<void> {
  await deps.store.create(entry, opts)
  announce(deps, entry)
}

/**
 * /start's read and claim (the store's `claim`): a one-shot flow still `stored` moves on, to
 * `started`, or through it to `awaiting_callback` when its first step ran at /store; each is told.
 */
export async function claimFlow(deps: BrokerDeps, hash: string): Promise<Claimed | undefined> {
  const claimed = await deps.store.claim(hash)
  if (!claimed || claimed.reusable || claimed.entry.progress !== 'stored') return claimed
  announce(deps, { ...claimed.entry, progress: 'started' })
  if (claimed.redirect) announce(deps, { ...claimed.entry, progress: 'awaiting_callback' })
  return claimed
}

/** The flow's result handed to its app (`mode`: query, form_post, code, json): told after its completion. */
export function delivered(deps: BrokerDeps, entry: FlowEntry, mode: string): void {
  if (deps.events.watched)
    deps.events.publish({
      type: 'delivered',
      hash: entry.hash,
      plugin: entry.plugin,
      progress: entry.progress,
      delivery: mode,
    })
}

/** The event of a flow that arrived at its progress; built only when someone watches. */
function announce(deps: BrokerDeps, entry: FlowEntry): void {
  if (!deps.events.watched) return
  const provider = providerHost(entry.record)
  deps.events.publish({
    type: EVENT_OF[entry.progress],
    hash: entry.hash,
    plugin: entry.plugin,
    progress: entry.progress,
    provider,
    expiresAt: entry.expiresAt,
    ...(entry.progress === 'failed' && entry.error ? { error: entry.error.code } : {}),
  })
}

/** The host of the provider a record talks to (for flow events), when it names one. */
export function providerHost(record: Readonly<FlowRecord>): string | undefined {
  const url = record.authorize_url ?? record.access_url ?? record.request_url ?? record.issuer
  return typeof url === 'string' ? urlParts(url)?.host : undefined
}
