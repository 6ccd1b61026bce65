import type { FlowEvent } from '../broker/events.js'

/** A flow as the flows panel lists it. */
export interface FlowRow {
  readonly hash: string
  /** The first 8 characters: enough to tell flows apart, not to start one. */
  readonly short: string
  readonly plugin: string
  readonly provider: string
  /** The last progress the flow reached: stored, started, awaiting callback, exchanging, completed or failed. */
  readonly progress: string
  /** Whole seconds left, 0 once expired; undefined when the broker did not say. */
  readonly secondsLeft?: number
  /** Its time is up (the `left` column reads "expired"), whatever progress it had reached. */
  readonly expired: boolean
  readonly error?: string
}

/** Whole seconds until `expiresAt`, never below 0. */
export function secondsLeft(expiresAt: number, now: number): number {
  return Math.max(0, Math.ceil((expiresAt - now) / 1000))
}

/**
 * The row of a flow at `now`. One wording for expiry: the progress column keeps the last progress
 * reached (`stored`, `completed` …) and the `left` column says `expired`, so an expired row reads
 * `stored … expired` or `completed … expired`, never `expired expired`.
 */
export function toRow(flow: FlowEvent, now: number): FlowRow {
  const left = flow.expiresAt === undefined ? undefined : secondsLeft(flow.expiresAt, now)
  const progress = flow.progress.replace(/_/g, ' ')
  return {
    hash: flow.hash,
    short: flow.hash.slice(0, 8),
    plugin: flow.plugin,
    provider: flow.provider ?? '—',
    progress,
    secondsLeft: left,
    expired: flow.type === 'expired' || left === 0,
    ...(flow.error ? { error: flow.error } : {}),
  }
}

/** The countdown column: `42s`, or "expired" once the time is up. */
export const countdown = (row: Pick<FlowRow, 'secondsLeft' | 'expired'>): string =>
  row.expired ? 'expired' : row.secondsLeft === undefined ? '—' : `${row.secondsLeft}s`

/** A colour for a row's progress: greyed out when the flow expired before it finished. */
export function progressColor(row: Pick<FlowRow, 'progress' | 'expired'>): string | undefined {
  const { progress } = row
  if (progress === 'failed') return 'red'
  if (progress === 'completed') return 'green'
  if (row.expired) return 'gray'
  if (progress === 'stored') return 'cyan'
  return 'yellow'
}

/** A column of the flows table and its width in characters (the last one, `error`, takes what is left). */
export type FlowColumn = readonly [name: 'hash' | 'flow' | 'provider' | 'progress' | 'left' | 'error', width: number]

const MARKER = 2

/**
 * The flows table's columns for a terminal `width` wide: hash, progress and countdown always; flow
 * and provider shrink (then provider goes) to keep every row on one line; the error takes the rest.
 */
export function flowColumns(width: number): FlowColumn[] {
  const fixed = 10 + 18 + 8
  // One column spare: a line that fills the last column makes some terminals wrap.
  let room = width - 1 - MARKER - fixed
  const flow = Math.max(8, Math.min(22, room - 14))
  room -= flow
  const columns: FlowColumn[] = [
    ['hash', 10],
    ['flow', flow],
  ]
  if (room >= 12) {
    const provider = Math.min(26, room)
    columns.push(['provider', provider])
    room -= provider
  }
  columns.push(['progress', 18], ['left', 8])
  if (room >= 10) columns.push(['error', room])
  return columns
}

/** `text` in a cell `width` wide: cut with an ellipsis when longer, never reaching the next column. */
export function cell(text: string, width: number): string {
  return text.length >= width ? `${text.slice(0, width - 2)}… ` : text.padEnd(width)
}
