/** The fixture's `expect` block against a replay's record; the verdict (verdict.ts) is its only caller. */
import type { Expectations } from '../fixture/index.js'
import { checkOutbound } from '../fixture/outbound.js'
import { compareBody, compareHeaders, type Failure, isSubset, matches } from '../fixture/compare.js'
import type { RunRecord } from './record.js'

const LEVEL_ALIASES: Record<string, string> = { err: 'error', deprecation: 'warn' }

/** A log level as the log lines name it (`err` ≡ `error`, `deprecation` ≡ `warn`). */
export const levelOf = (level: string): string =>
  (Object.hasOwn(LEVEL_ALIASES, level) ? LEVEL_ALIASES[level] : undefined) ?? level

/** Every failed expectation, with its path in the fixture. */
export function checkExpectations(expect: Expectations | undefined, run: RunRecord): Failure[] {
  const out: Failure[] = []
  if (!expect) return out
  const { response: res, upstream } = run
  if (expect.status !== undefined && !matches(expect.status, res.status))
    out.push({ path: '$.expect.status', expected: expect.status, actual: res.status })
  if (expect.headers) compareHeaders(expect.headers, res.headers, '$.expect.headers', out)
  if (expect.body !== undefined) compareBody(expect.body, res.body, '$.expect.body', out)
  if (expect.source !== undefined && expect.source !== res.source) {
    out.push({ path: '$.expect.source', expected: expect.source, actual: res.source })
  }
  expect.logs?.forEach((want, i) => {
    const level = levelOf(want.level)
    if (!run.logs.some((l) => l.level === level && l.line.includes(want.contains))) {
      const sameLevel = run.logs.filter((l) => l.level === level).map((l) => l.line)
      out.push({ path: `$.expect.logs[${i}]`, expected: { level, contains: want.contains }, actual: sameLevel })
    }
  })
  expect.no_logs?.forEach((unwanted, i) => {
    const level = unwanted.level === undefined ? undefined : levelOf(unwanted.level)
    const hits = run.logs.filter(
      (l) => (level === undefined || l.level === level) && l.line.includes(unwanted.contains),
    )
    if (hits.length > 0)
      out.push({ path: `$.expect.no_logs[${i}]`, expected: 'no such log line', actual: hits.map((l) => l.line) })
  })

  if (expect.upstream_request === null) {
    if (upstream !== null) out.push({ path: '$.expect.upstream_request', expected: null, actual: upstream })
  } else if (expect.upstream_request) {
    const want = expect.upstream_request
    if (upstream === null) out.push({ path: '$.expect.upstream_request', expected: want, actual: null })
    else {
      for (const k of ['method', 'path', 'query'] as const) {
        if (want[k] !== undefined && !matches(want[k], upstream[k]))
          out.push({ path: `$.expect.upstream_request.${k}`, expected: want[k], actual: upstream[k] })
      }
      if (want.headers) compareHeaders(want.headers, upstream.headers, '$.expect.upstream_request.headers', out)
      if (want.body !== undefined) compareBody(want.body, upstream.body, '$.expect.upstream_request.body', out)
    }
  }
  if (expect.outbound) out.push(...checkOutbound(expect.outbound, run.outbound))
  expect.telemetry?.forEach((want, i) => {
    if (!run.telemetry.some((t) => isSubset(want, t)))
      out.push({ path: `$.expect.telemetry[${i}]`, expected: want, actual: run.telemetry })
  })
  return out
}
