/** The human trace of `broker pdk run`: phases, calls, final response, failures, summary line. */
import { styleText } from 'node:util'
import type { ScenarioResult } from '../../../pdk/runner/index.js'
import { isAssignment } from '../../../pdk/kit/private/trace.js'

const show = (v: unknown): string => {
  const text = JSON.stringify(v)
  return text === undefined ? 'nil' : text.length > 200 ? text.slice(0, 197) + '...' : text
}

function renderOne(r: ScenarioResult): string {
  const lines: string[] = [`${r.verdict.status === 'pass' ? 'PASS' : 'FAIL'} ${r.name} (${r.file})`]
  for (const p of r.phases) {
    lines.push(`  ${p.phase} · ${p.plugin}`)
    for (const c of p.calls) {
      if (isAssignment(c.call) && c.throws === undefined) {
        lines.push(`    ${c.call} = ${show(c.args[0] ?? undefined)}`)
        continue
      }
      const call = `${c.call}(${c.args.map(show).join(', ')})`
      lines.push(
        c.throws !== undefined
          ? `    ${call} ${c.expected ? '✓ throws as expected:' : '✗'} ${c.throws}`
          : `    ${call} → ${c.returns?.length ? c.returns.map(show).join(', ') : 'nothing'}`,
      )
    }
    if (p.error !== undefined) lines.push(`    ✗ plugin error: ${p.error}`)
  }
  lines.push(`  response ${r.response.status} (source: ${r.response.source})`)
  for (const [name, value] of Object.entries(r.response.headers)) {
    for (const v of Array.isArray(value) ? value : [value]) lines.push(`    ${name}: ${v}`)
  }
  if (r.response.body !== '') lines.push(...r.response.body.split('\n').map((l) => `    | ${l}`))
  for (const f of r.verdict.failures) {
    lines.push(`  ✗ ${f.path}`, `      expected: ${show(f.expected)}`, `      actual:   ${show(f.actual)}`)
  }
  return lines.join('\n')
}

/** The whole report, ending with `N passed, M failed`; PASS, FAIL and ✗ lines coloured when `color`. */
export function renderRun(results: ScenarioResult[], color = false): string {
  const passed = results.filter((r) => r.verdict.status === 'pass').length
  const text = [...results.map(renderOne), `${passed} passed, ${results.length - passed} failed`].join('\n\n') + '\n'
  if (!color) return text
  return text
    .replace(/^(PASS|FAIL)\b/gm, (word) => styleText(word === 'PASS' ? 'green' : 'red', word))
    .replace(/^( +✗.*)$/gm, (line) => styleText('red', line))
}
