import { answerLines } from './answer.js'
import type { Hop } from './walker.js'
import type { WalkResult } from './index.js'

/** One hop as a few readable lines: `#n METHOD URL → status`, then Location, cookies and OAuth params. */
export function renderHop(hop: Hop): string {
  const lines = [
    `#${hop.n}  ${hop.method} ${hop.url}  → ${hop.status || 'no answer'}${hop.error ? ` (${hop.error})` : ''}`,
  ]
  if (hop.location) lines.push(`    Location: ${hop.location}`)
  if (hop.cookies.length) lines.push(`    Set-Cookie: ${hop.cookies.join(', ')}`)
  const params = Object.entries(hop.params)
  const width = Math.max(0, ...params.map(([k]) => k.length))
  for (const [k, v] of params) lines.push(`    ${k.padEnd(width)}  ${v}`)
  return lines.join('\n')
}

/** The answer that ended the chain, indented under the last hop: status line, then the body. */
export function renderAnswer(result: WalkResult): string | undefined {
  if (!result.final) return undefined
  return answerLines(result.final)
    .map((line, i) => (i === 0 ? `    ${line}` : `    | ${line}`))
    .join('\n')
}

/** The last line of a walk: how many hops and why it ended. */
export function renderWalkEnd(result: WalkResult): string {
  const tail = result.next ? ` (next: ${result.next})` : ''
  return `${result.hops.length} hop${result.hops.length === 1 ? '' : 's'}; ${result.reason}${tail}.`
}
