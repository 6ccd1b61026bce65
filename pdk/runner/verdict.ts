/**
 * Pass or fail of a fixture, decided here and nowhere else: what a replay produced (its record) against
 * what the fixture states (`expect`, the call scripts' `returns` and `throws`). `broker pdk run` and the
 * dashboard's PDK panel only render the verdict and use its exit code.
 */
import type { Expectations } from '../fixture/index.js'
import { FixtureError } from '../fixture/index.js'
import { type Failure, matches, trimNulls } from '../fixture/compare.js'
import { checkExpectations, levelOf } from './expect.js'
import type { RunRecord, ScriptStep } from './record.js'

/** A fixture's verdict: `pass` (exit 0), `fail` with what failed (exit 1), or `error`: it cannot run (exit 2). */
export type Verdict =
  | { status: 'pass'; failures: []; exitCode: 0 }
  | { status: 'fail'; failures: Failure[]; exitCode: 1 }
  | { status: 'error'; failures: Failure[]; exitCode: 2; error: FixtureError }

/** The verdict of a fixture that cannot run. */
export type ErrorVerdict = Extract<Verdict, { status: 'error' }>

/** The verdict of a fixture that ran: pass or fail. */
export type RunVerdict = Exclude<Verdict, ErrorVerdict>

/** The levels the verdict watches: `[error]` lines, as Kong's tests check `no_error_log [error]`. */
const ERROR_LEVELS: ReadonlySet<string> = new Set(['error'])

/**
 * The verdict of one fixture: `run` is its replay's record, or the FixtureError that kept it from running.
 * Failures come in this order: the call scripts' steps as they ran, then `expect`, then unexpected errors.
 */
export function verdict(expect: Expectations | undefined, run: FixtureError): ErrorVerdict
export function verdict(expect: Expectations | undefined, run: RunRecord): RunVerdict
export function verdict(expect: Expectations | undefined, run: RunRecord | FixtureError): Verdict
export function verdict(expect: Expectations | undefined, run: RunRecord | FixtureError): Verdict {
  if (run instanceof FixtureError)
    return {
      status: 'error',
      exitCode: 2,
      error: run,
      failures: [{ path: run.path, expected: 'a fixture that can run', actual: run.reason }],
    }
  const failures = [
    ...run.steps.flatMap(stepFailures),
    ...checkExpectations(expect, run),
    ...unexpectedErrors(expect, run),
  ]
  return failures.length === 0
    ? { status: 'pass', failures: [], exitCode: 0 }
    : { status: 'fail', failures, exitCode: 1 }
}

/** The exit code of a run of several fixtures: the worst of their verdicts' (0 when all pass). */
export const exitCodeOf = (verdicts: ReadonlyArray<Pick<Verdict, 'exitCode'>>): 0 | 1 | 2 =>
  verdicts.reduce<0 | 1 | 2>((worst, v) => (v.exitCode > worst ? v.exitCode : worst), 0)

/** What a call script's step got wrong. A call that threw where the step states no `throws` failed its phase: the error check below sees it. */
function stepFailures(step: ScriptStep): Failure[] {
  const { at, outcome } = step
  if (outcome.kind === 'unknown') {
    const hint = outcome.near ? ` (did you mean ${outcome.near}?)` : ''
    return [{ path: `${at}.call`, expected: `a kit function${hint}`, actual: step.call }]
  }
  if (outcome.kind === 'threw') {
    if (step.throws === undefined || outcome.message.includes(step.throws)) return []
    return [{ path: `${at}.throws`, expected: step.throws, actual: outcome.message }]
  }
  if (step.throws !== undefined)
    return [{ path: `${at}.throws`, expected: step.throws, actual: { returns: outcome.values } }]
  if (step.returns === undefined) return []
  const actual = trimNulls(outcome.values)
  return matches(trimNulls(step.returns), actual) ? [] : [{ path: `${at}.returns`, expected: step.returns, actual }]
}

/**
 * The verdict on errors: every `[error]` log line (a plugin that threw, a call that threw where no
 * `throws` was written, a phase that timed out, a kit or plugin error log) and every plugin exception
 * must be stated by `expect.errors` or by an `expect.logs` entry at that level; any other fails the
 * fixture, whatever phase it came from. Each `expect.errors` entry must also happen.
 */
function unexpectedErrors(expect: Expectations | undefined, run: RunRecord): Failure[] {
  const out: Failure[] = []
  const errorLines = run.logs.filter((l) => ERROR_LEVELS.has(l.level)).map((l) => l.line)
  const thrown = run.phases.flatMap((t) => (t.error === undefined ? [] : [t.error]))
  expect?.errors?.forEach((contains, i) => {
    if (!errorLines.some((l) => l.includes(contains)) && !thrown.some((e) => e.includes(contains)))
      out.push({ path: `$.expect.errors[${i}]`, expected: contains, actual: [...errorLines, ...thrown] })
  })
  const stated = (text: string, level: string) =>
    expect?.errors?.some((c) => text.includes(c)) ||
    expect?.logs?.some((w) => levelOf(w.level) === level && text.includes(w.contains))
  run.logs.forEach((l, i) => {
    if (ERROR_LEVELS.has(l.level) && !stated(l.line, l.level))
      out.push({ path: `$.logs[${i}]`, expected: 'no unexpected error (state it in expect.errors)', actual: l.line })
  })
  // a plugin failure that left no error line of its own (e.g. a module plugin's uncaught exception)
  for (const t of run.phases) {
    if (t.error === undefined || run.logs.some((l) => ERROR_LEVELS.has(l.level) && l.line.includes(t.error!))) continue
    if (!stated(t.error, 'error'))
      out.push({
        path: `$.phases.${t.phase}.${t.plugin}`,
        expected: 'no unexpected error (state it in expect.errors)',
        actual: t.error,
      })
  }
  return out
}
