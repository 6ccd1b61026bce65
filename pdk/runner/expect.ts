/** Checks a finished scenario against the fixture's `expect` block. */
import type { Context } from '../context.js'
import type { Expectations } from '../fixture.js'
import { headerKey, type HeadersTable } from '../headers.js'
import { isSubset, matches } from './compare.js'

export interface Failure {
  path: string
  expected: unknown
  actual: unknown
}

export interface UpstreamSnapshot {
  method: string
  path: string
  query: string
  headers: HeadersTable
  body: string
}

const LEVEL_ALIASES: Record<string, string> = { err: 'error', deprecation: 'warn' }

function compareBody(expected: unknown, actual: string | null, path: string, out: Failure[]): void {
  if (typeof expected === 'string' || isTextMatcher(expected)) {
    if (!matches(expected, actual)) out.push({ path, expected, actual })
    return
  }
  let parsed: unknown
  try {
    parsed = actual === null ? null : JSON.parse(actual)
  } catch {
    parsed = actual
  }
  if (!matches(expected, parsed)) out.push({ path, expected, actual: parsed })
}

function compareHeaders(expected: Record<string, unknown>, actual: HeadersTable, path: string, out: Failure[]): void {
  const byKey = new Map(Object.entries(actual).map(([k, v]) => [headerKey(k), v]))
  for (const [name, want] of Object.entries(expected)) {
    const got = byKey.get(headerKey(name)) ?? null
    const same =
      want === null
        ? got === null
        : Array.isArray(want)
          ? matches(want, Array.isArray(got) ? got : got === null ? null : [got])
          : matches(want, got)
    if (!same) out.push({ path: `${path}.${name}`, expected: want, actual: got })
  }
}

const levelOf = (level: string): string =>
  (Object.hasOwn(LEVEL_ALIASES, level) ? LEVEL_ALIASES[level] : undefined) ?? level

/** The level the verdict watches: `[error]` lines, as Kong's tests check `no_error_log [error]`. */
export const ERROR_LEVELS: ReadonlySet<string> = new Set(['error'])

const isTextMatcher = (v: unknown): boolean =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length === 1 && '$match' in v

/**
 * The verdict on errors: every `[error]` log line (a plugin that threw, a call that threw
 * where no `throws` was written, a kit or plugin error log) and every plugin exception must be
 * stated by `expect.errors` or by an `expect.logs` entry at that level; any other fails the
 * fixture, whatever phase it came from. Each `expect.errors` entry must also happen.
 */
export function unexpectedErrors(
  expect: Expectations | undefined,
  ctx: Context,
  traces: ReadonlyArray<{ phase: string; plugin: string; error?: string }>,
): Failure[] {
  const out: Failure[] = []
  const errorLines = ctx.logs.filter((l) => ERROR_LEVELS.has(l.level)).map((l) => l.line)
  const thrown = traces.flatMap((t) => (t.error === undefined ? [] : [t.error]))
  expect?.errors?.forEach((contains, i) => {
    if (!errorLines.some((l) => l.includes(contains)) && !thrown.some((e) => e.includes(contains)))
      out.push({ path: `$.expect.errors[${i}]`, expected: contains, actual: [...errorLines, ...thrown] })
  })
  const stated = (text: string, level: string) =>
    expect?.errors?.some((c) => text.includes(c)) ||
    expect?.logs?.some((w) => levelOf(w.level) === level && text.includes(w.contains))
  ctx.logs.forEach((l, i) => {
    if (ERROR_LEVELS.has(l.level) && !stated(l.line, l.level))
      out.push({ path: `$.logs[${i}]`, expected: 'no unexpected error (state it in expect.errors)', actual: l.line })
  })
  // a plugin failure that left no error line of its own (e.g. a module plugin's uncaught exception)
  for (const t of traces) {
    if (t.error === undefined || ctx.logs.some((l) => ERROR_LEVELS.has(l.level) && l.line.includes(t.error!))) continue
    if (!stated(t.error, 'error'))
      out.push({
        path: `$.phases.${t.phase}.${t.plugin}`,
        expected: 'no unexpected error (state it in expect.errors)',
        actual: t.error,
      })
  }
  return out
}

/** The source as response.get_source reports it. */
export const sourceOf = (ctx: Context): 'exit' | 'error' | 'service' =>
  ctx.response.unexpected ? 'error' : ctx.response.exited ? 'exit' : ctx.response.proxied ? 'service' : 'error'

/** Every failed expectation, with its path in the fixture. */
export function checkExpectations(
  expect: Expectations | undefined,
  ctx: Context,
  upstream: UpstreamSnapshot | null,
): Failure[] {
  const out: Failure[] = []
  if (!expect) return out
  const res = ctx.response
  if (expect.status !== undefined && !matches(expect.status, res.status))
    out.push({ path: '$.expect.status', expected: expect.status, actual: res.status })
  if (expect.headers) compareHeaders(expect.headers, res.headers.table().headers, '$.expect.headers', out)
  if (expect.body !== undefined) compareBody(expect.body, res.body?.toString('utf8') ?? null, '$.expect.body', out)
  if (expect.source !== undefined && expect.source !== sourceOf(ctx)) {
    out.push({ path: '$.expect.source', expected: expect.source, actual: sourceOf(ctx) })
  }
  expect.logs?.forEach((want, i) => {
    const level = levelOf(want.level)
    if (!ctx.logs.some((l) => l.level === level && l.line.includes(want.contains))) {
      const sameLevel = ctx.logs.filter((l) => l.level === level).map((l) => l.line)
      out.push({ path: `$.expect.logs[${i}]`, expected: { level, contains: want.contains }, actual: sameLevel })
    }
  })
  expect.no_logs?.forEach((unwanted, i) => {
    const level = unwanted.level === undefined ? undefined : levelOf(unwanted.level)
    const hits = ctx.logs.filter(
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
  expect.telemetry?.forEach((want, i) => {
    if (!ctx.telemetry.some((t) => isSubset(want, t)))
      out.push({ path: `$.expect.telemetry[${i}]`, expected: want, actual: ctx.telemetry })
  })
  return out
}
