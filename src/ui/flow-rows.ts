import type { FlowEvent } from '../broker/events.js'

/** A flow as the flows panel lists it. */
export interface FlowRow {
  readonly hash: string
  /** The first 8 characters: enough to tell flows apart, not to start one. */
  readonly short: string
  readonly plugin: string
  readonly provider: string
  /** stored, started, awaiting callback, exchanging, completed, failed or expired. */
  readonly progress: string
  /** Whole seconds left, 0 once expired; undefined when the broker did not say. */
  readonly secondsLeft?: number
  readonly error?: string
}

const FINISHED = new Set(['completed', 'failed'])

/** Whole seconds until `expiresAt`, never below 0. */
export function secondsLeft(expiresAt: number, now: number): number {
  return Math.max(0, Math.ceil((expiresAt - now) / 1000))
}

/** The row of a flow at `now`: an unfinished flow whose time ran out reads "expired". */
export function toRow(flow: FlowEvent, now: number): FlowRow {
  const left = flow.expiresAt === undefined ? undefined : secondsLeft(flow.expiresAt, now)
  const progress =
    flow.type === 'expired' || (left === 0 && !FINISHED.has(flow.progress))
      ? 'expired'
      : flow.progress.replace(/_/g, ' ')
  return {
    hash: flow.hash,
    short: flow.hash.slice(0, 8),
    plugin: flow.plugin,
    provider: flow.provider ?? '—',
    progress,
    secondsLeft: left,
    ...(flow.error ? { error: flow.error } : {}),
  }
}

/** The countdown column: `42s`, or "expired" at zero. */
export const countdown = (row: FlowRow): string =>
  row.secondsLeft === undefined ? '—' : row.secondsLeft > 0 ? `${row.secondsLeft}s` : 'expired'

/** A colour for a progress label. */
export function progressColor(progress: string): string | undefined {
  if (progress === 'failed') return 'red'
  if (progress === 'completed') return 'green'
  if (progress === 'expired') return 'gray'
  if (progress === 'stored') return 'cyan'
  return 'yellow'
}
