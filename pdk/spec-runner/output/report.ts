/** The results of a run in busted's JSON output shape: successes, failures, errors and pendings. */
import type { SpecResult } from '../session.js'

/** One test (or failed hook) as busted's JSON output lists it. */
export interface ReportEntry {
  name: string
  message: string | null
  trace: { short_src: string; currentline: number; traceback?: string }
  element: { descriptor: string; file: string; line: number; duration: number }
  isError: boolean
}

export interface SpecReport {
  successes: ReportEntry[]
  failures: ReportEntry[]
  errors: ReportEntry[]
  pendings: ReportEntry[]
  /** Seconds the run took. */
  duration: number
}

const entry = (r: SpecResult): ReportEntry => ({
  name: r.name,
  message: r.message ?? null,
  trace: r.trace ?? { short_src: r.file, currentline: r.line },
  element: { descriptor: r.descriptor, file: r.file, line: r.line, duration: r.duration },
  isError: r.status === 'error',
})

/** Results in run order, sorted into busted's four lists. */
export function toReport(results: readonly SpecResult[], duration: number): SpecReport {
  const pick = (s: SpecResult['status']) => results.filter((r) => r.status === s).map(entry)
  return {
    successes: pick('success'),
    failures: pick('failure'),
    errors: pick('error'),
    pendings: pick('pending'),
    duration,
  }
}

/** Exit status as `broker pdk test` gives it: 0 only when nothing failed or errored. */
export const exitCodeOfReport = (r: SpecReport): 0 | 1 => (r.failures.length + r.errors.length > 0 ? 1 : 0)
