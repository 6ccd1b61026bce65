/** Checks a finished scenario against the fixture's `expect` block. */
import type { Context } from '../context.js'
import type { Expectations } from '../fixture.js'
import { headerKey, type HeadersTable } from '../headers.js'
import { deepEqual, isSubset } from './compare.js'

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
  if (typeof expected === 'string') {
    if (expected !== actual) out.push({ path, expected, actual })
    return
  }
  let parsed: unknown
  try {
    parsed = actual === null ? null : JSON.parse(actual)
  } catch {
    parsed = actual
  }
  if (!deepEqual(expected, parsed)) out.push({ path, expected, actual: parsed })
}

function compareHeaders(expected: Record<string, unknown>, actual: HeadersTable, path: string, out: Failure[]): void {
  const byKey = new Map(Object.entries(actual).map(([k, v]) => [headerKey(k), v]))
  for (const [name, want] of Object.entries(expected)) {
    const got = byKey.get(headerKey(name)) ?? null
    const same =
      want === null
        ? got === null
        : Array.isArray(want)
          ? deepEqual(want, Array.isArray(got) ? got : got === null ? null : [got])
          : want === got
    if (!same) out.push({ path: `${path}.${name}`, expected: want, actual: got })
  }
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
  if (expect.status !== undefined && expect.status !== res.status)
    out.push({ path: '$.expect.status', expected: expect.status, actual: res.status })
  if (expect.headers) compareHeaders(expect.headers, res.headers.table().headers, '$.expect.headers', out)
  if (expect.body !== undefined) compareBody(expect.body, res.body?.toString('utf8') ?? null, '$.expect.body', out)
  if (expect.source !== undefined && expect.source !== sourceOf(ctx)) {
    out.push({ path: '$.expect.source', expected: expect.source, actual: sourceOf(ctx) })
  }
  expect.logs?.forEach((want, i) => {
    const level = (Object.hasOwn(LEVEL_ALIASES, want.level) ? LEVEL_ALIASES[want.level] : undefined) ?? want.level
    if (!ctx.logs.some((l) => l.level === level && l.line.includes(want.contains))) {
      const sameLevel = ctx.logs.filter((l) => l.level === level).map((l) => l.line)
      out.push({ path: `$.expect.logs[${i}]`, expected: { level, contains: want.contains }, actual: sameLevel })
    }
  })
  if (expect.upstream_request === null) {
    if (upstream !== null) out.push({ path: '$.expect.upstream_request', expected: null, actual: upstream })
  } else if (expect.upstream_request) {
    const want = expect.upstream_request
    if (upstream === null) out.push({ path: '$.expect.upstream_request', expected: want, actual: null })
    else {
      for (const k of ['method', 'path', 'query'] as const) {
        if (want[k] !== undefined && want[k] !== upstream[k])
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
