import type { StoreResult } from './index.js'

/** The human answer of `broker store`: hash, start URL, expiry; with --capture the delivered result. */
export function renderStored(r: StoreResult): string {
  const rows: Array<[string, string]> = [
    ['hash', r.hash],
    ['start URL', r.url],
    ['flow', r.plugin],
    ['expires', `in ${r.expires_in} s (${r.expires_at})`],
  ]
  if (r.callback) rows.push(['callback', r.callback])
  if (r.user_code) rows.push(['user code', r.user_code])
  if (r.verification_uri) rows.push(['enter it at', r.verification_uri])
  const lines = table(rows)
  if (r.captured) {
    lines.push(
      '',
      `Result (delivered by ${r.captured.delivery}):`,
      ...table(Object.entries(r.captured.result).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)])),
    )
  }
  return lines.join('\n')
}

/** Two aligned columns. */
export function table(rows: ReadonlyArray<readonly [string, string]>): string[] {
  const width = Math.max(0, ...rows.map(([k]) => k.length))
  return rows.map(([k, v]) => `  ${k.padEnd(width)}  ${v}`)
}
