import { table } from '../store/render.js'
import type { HashCheck } from './index.js'

/** The seconds-left figure, counted from expires_at so a watcher can redraw it every second. */
export function secondsLeft(r: Pick<HashCheck, 'expires_at'>, now = Date.now()): number {
  return Math.max(0, Math.ceil((Date.parse(r.expires_at) - now) / 1000))
}

/** One status line: progress and seconds left. */
export function renderStatus(r: HashCheck, now = Date.now()): string {
  const left = secondsLeft(r, now)
  return `${r.progress}, ${left ? `expires in ${left} s` : 'expired'}${r.error ? ` — ${r.error.code}: ${r.error.description}` : ''}`
}

/** The human answer of `broker hash-check`: the flow, its status and the record as a table. */
export function renderHashCheck(r: HashCheck, now = Date.now()): string {
  const head: Array<[string, string]> = [
    ['hash', r.hash],
    ['plugin', r.plugin + (r.description ? ` — ${r.description}` : '')],
    ['progress', r.progress],
    ['expires', `in ${secondsLeft(r, now)} s (${r.expires_at})`],
    ['created', r.created_at],
  ]
  if (r.error) head.push(['error', `${r.error.code}: ${r.error.description}`])
  const fields = Object.entries(r.record).map(
    ([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)] as [string, string],
  )
  return [...table(head), '', 'Record (secrets redacted by the broker):', ...table(fields)].join('\n')
}

/** How a watched flow ended: completed, failed, or (a watch stops at nothing else) expired before either. */
export function watchEnd(r: Pick<HashCheck, 'progress'>): 'completed' | 'failed' | 'expired' {
  return r.progress === 'completed' || r.progress === 'failed' ? r.progress : 'expired'
}
