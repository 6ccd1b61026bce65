/**
 * The output handlers of busted that `broker pdk test -o` offers: utfTerminal (the default), TAP,
 * json and gtest, each rendering the whole run's results (our own wording, busted's layouts).
 */
import { styleText } from 'node:util'
import type { SpecResult } from '../session.js'
import type { SpecReport } from './report.js'

export const OUTPUTS = ['utfTerminal', 'TAP', 'json', 'gtest'] as const
export type OutputName = (typeof OUTPUTS)[number]

/** The results of one spec file, in the order they ran. */
export interface FileResults {
  file: string
  results: SpecResult[]
}

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`
const seconds = (s: number) => s.toFixed(6).replace(/0+$/, '').replace(/\.$/, '')

function utfTerminal(files: readonly FileResults[], report: SpecReport, color: boolean): string {
  const paint = (style: Parameters<typeof styleText>[0], text: string) => (color ? styleText(style, text) : text)
  const marks: Record<SpecResult['status'], string> = {
    success: paint('green', '●'),
    failure: paint('red', '◼'),
    error: paint('magenta', '✱'),
    pending: paint('yellow', '◌'),
  }
  const all = files.flatMap((f) => f.results)
  const out = [all.map((r) => marks[r.status]).join('')]
  out.push(
    `${paint('green', plural(report.successes.length, 'success', 'successes'))} / ${paint('red', plural(report.failures.length, 'failure', 'failures'))} / ${paint('magenta', plural(report.errors.length, 'error', 'errors'))} / ${paint('yellow', `${report.pendings.length} pending`)} : ${seconds(report.duration)} seconds`,
  )
  const label = { pending: 'Pending', failure: 'Failure', error: 'Error', success: '' } as const
  for (const status of ['pending', 'failure', 'error'] as const) {
    for (const r of all.filter((x) => x.status === status)) {
      const at = r.trace?.short_src ?? r.file
      const line = r.trace?.currentline ?? r.line
      const hook = r.descriptor !== 'it' && r.descriptor !== 'pending' ? ` (in ${r.descriptor})` : ''
      out.push(
        '',
        `${paint(status === 'pending' ? 'yellow' : status === 'failure' ? 'red' : 'magenta', label[status])} → ${paint('cyan', `${at} @ ${line}`)}`,
      )
      out.push(`${paint('bold', r.name)}${hook}`)
      if (r.message) out.push(r.message)
    }
  }
  return out.join('\n') + '\n'
}

function tap(files: readonly FileResults[]): string {
  const all = files.flatMap((f) => f.results)
  const out = [`1..${all.length}`]
  all.forEach((r, i) => {
    const n = i + 1
    if (r.status === 'success') out.push(`ok ${n} - ${r.name}`)
    else if (r.status === 'pending') out.push(`ok ${n} - # SKIP ${r.name}`)
    else {
      out.push(`not ok ${n} - ${r.name}`)
      out.push(`# ${r.trace?.short_src ?? r.file} @ ${r.trace?.currentline ?? r.line}`)
      const kind = r.status === 'failure' ? 'Failure' : 'Error'
      for (const [j, line] of (r.message ?? '').split('\n').entries())
        out.push(j === 0 ? `# ${kind} message: ${line}` : `# ${line}`)
    }
  })
  return out.join('\n') + '\n'
}

function gtest(files: readonly FileResults[], report: SpecReport, color: boolean): string {
  const paint = (style: Parameters<typeof styleText>[0], text: string) => (color ? styleText(style, text) : text)
  const ms = (s: number) => `${(s * 1000).toFixed(2)} ms`
  const ran = files.flatMap((f) => f.results).filter((r) => r.status !== 'pending')
  const out = [paint('green', '[==========]') + ' Running tests from scanned files.']
  out.push(paint('green', '[----------]') + ' Global test environment setup.')
  for (const f of files) {
    out.push(paint('green', '[----------]') + ` Running tests from ${f.file}`)
    let total = 0
    for (const r of f.results) {
      const title = `${r.trace?.short_src ?? r.file} @ ${r.line}: ${r.name}`
      total += r.duration
      if (r.status === 'pending') {
        out.push(paint('yellow', '[ PENDING  ]') + ` ${title}`)
        continue
      }
      out.push(paint('green', '[ RUN      ]') + ` ${title}`)
      if (r.status === 'success') out.push(paint('green', '[       OK ]') + ` ${title} (${ms(r.duration)})`)
      else {
        if (r.message) out.push(r.message)
        out.push(
          paint('red', r.status === 'failure' ? '[  FAILED  ]' : '[  ERROR   ]') + ` ${title} (${ms(r.duration)})`,
        )
      }
    }
    const count = f.results.filter((r) => r.status !== 'pending').length
    out.push(
      paint('green', '[----------]') + ` ${plural(count, 'test', 'tests')} from ${f.file} (${ms(total)} total)`,
      '',
    )
  }
  out.push(paint('green', '[----------]') + ' Global test environment teardown.')
  out.push(
    paint('green', '[==========]') +
      ` ${plural(ran.length, 'test', 'tests')} from ${plural(files.length, 'test file', 'test files')} ran. (${ms(report.duration)} total)`,
  )
  out.push(paint('green', '[  PASSED  ]') + ` ${plural(report.successes.length, 'test', 'tests')}.`)
  if (report.pendings.length)
    out.push(paint('yellow', '[ PENDING  ]') + ` ${plural(report.pendings.length, 'test', 'tests')}, listed below:`)
  for (const r of report.pendings)
    out.push(paint('yellow', '[ PENDING  ]') + ` ${r.trace.short_src} @ ${r.element.line}: ${r.name}`)
  for (const [list, word, style] of [
    [report.failures, 'FAILED', 'red'],
    [report.errors, 'ERROR', 'magenta'],
  ] as const) {
    if (!list.length) continue
    out.push(paint(style, `[  ${word.padEnd(6)}  ]`) + ` ${plural(list.length, 'test', 'tests')}, listed below:`)
    for (const r of list)
      out.push(paint(style, `[  ${word.padEnd(6)}  ]`) + ` ${r.trace.short_src} @ ${r.element.line}: ${r.name}`)
  }
  return out.join('\n') + '\n'
}

/** The run rendered by one of busted's output handlers. */
export function render(name: OutputName, files: readonly FileResults[], report: SpecReport, color: boolean): string {
  if (name === 'json') return JSON.stringify(report) + '\n'
  if (name === 'TAP') return tap(files)
  if (name === 'gtest') return gtest(files, report, color)
  return utfTerminal(files, report, color)
}
