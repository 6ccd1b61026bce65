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
