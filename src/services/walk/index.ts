import { brokerError } from '../../errors/index.js'
import { displayUrl } from './params.js'
import { type ShownAnswer, showAnswer } from './answer.js'
import { type Hop, type StopReason, Walker, type WalkerOptions } from './walker.js'

export { Walker } from './walker.js'
export type { FinalAnswer, Hop, StopReason } from './walker.js'
export type { ShownAnswer } from './answer.js'

export interface WalkOptions extends WalkerOptions {
  url: string
  /** Stop after this many requests (default 20). */
  maxHops?: number
  /** Called with each hop as it is made (progress). */
  onHop?: (hop: Hop) => void
  /** Awaited before every hop after the first (`--step`). */
  pause?: (next: string) => Promise<void>
}

export interface WalkResult {
  start: string
  hops: Hop[]
  stopped: StopReason
  /** Why the walk ended, in words. */
  reason: string
  /** The URL the walk did not request (at --max-hops or at a host boundary). */
  next?: string
  /** The answer that ended the chain (not a redirect): its body shown, codes and tokens shortened. */
  final?: ShownAnswer
}

/**
 * Follows `url` hop by hop, keeping cookies, until a non-redirect, --max-hops, or a host boundary.
 * `stopped` is `http_error` when the chain ends in a 4xx or 5xx answer, `error` when a hop got no answer.
 */
export async function walk(opts: WalkOptions): Promise<WalkResult> {
  let parsed: URL
  try {
    parsed = new URL(opts.url)
  } catch {
    throw brokerError('walkNeedsUrl', { url: opts.url })
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw brokerError('walkHttpOnly', { url: opts.url })
  const max = opts.maxHops ?? 20
  const walker = new Walker(parsed.toString(), opts)
  const hops: Hop[] = []
  while (hops.length < max) {
    if (hops.length && walker.pending && opts.pause) await opts.pause(displayUrl(walker.pending))
    const hop = await walker.next()
    if (!hop) break
    hops.push(hop)
    opts.onHop?.(hop)
  }
  const stopped = walker.stopped ?? { reason: 'max_hops' as const, message: `stopped after --max-hops ${max}` }
  const next = walker.stopped?.reason === 'host' || !walker.stopped ? hops.at(-1)?.location : undefined
  return {
    start: parsed.toString(),
    hops,
    stopped: stopped.reason,
    reason: stopped.message,
    ...(next ? { next } : {}),
    ...(walker.final ? { final: showAnswer(walker.final) } : {}),
  }
}
