/**
 * A Zipkin collector answered in process, where Kong's spec helpers name one (`helpers.zipkin_host`,
 * `zipkin_port`): a plugin posts spans to its `/api/v2/spans` (the zipkin plugin's reporter, from a timer) and
 * the spec reads them back through Zipkin's query API (`/api/v2/traces`, `/api/v2/trace/<id>` …). Written from
 * Zipkin's published API v2 (zipkin2-api.yaml): spans are kept as Zipkin stores them (ids lower-cased and
 * padded to 16 hex digits, a 128-bit trace id with a zero upper half shortened to 64 bits, names and service
 * names lower-cased, empty tags and annotations and zero times left out). One store per spec file.
 */
import type { UpstreamAnswer, UpstreamRequest } from './mock-upstream.js'

export const ZIPKIN_PORT = 9411

type Endpoint = { serviceName?: string; ipv4?: string; ipv6?: string; port?: number }
interface Span {
  traceId: string
  id: string
  parentId?: string
  name?: string
  kind?: string
  timestamp?: number
  duration?: number
  localEndpoint?: Endpoint
  remoteEndpoint?: Endpoint
  annotations?: Array<{ timestamp: number; value: string }>
  tags?: Record<string, string>
  debug?: boolean
  shared?: boolean
}

const json = { 'Content-Type': 'application/json' }
const text = { 'Content-Type': 'text/plain' }
const ok = (body: unknown): UpstreamAnswer => ({ status: 200, headers: json, body: JSON.stringify(body) })
const bad = (status: number, message: string): UpstreamAnswer => ({ status, headers: text, body: message })

const HEX = /^[0-9a-f]{1,32}$/

/** An id as Zipkin keeps it: lower case, at least 16 digits; a trace id's zero upper half dropped. */
function normalizeId(value: unknown, field: string, trace = false): string {
  const id = String(value ?? '').toLowerCase()
  if (!HEX.test(id) || (!trace && id.length > 16))
    throw new Error(`${field} should be lower-hex encoded with no prefix`)
  const padded = id.length <= 16 ? id.padStart(16, '0') : id.padStart(32, '0')
  return trace && padded.length === 32 && padded.startsWith('0'.repeat(16)) ? padded.slice(16) : padded
}

function endpoint(e: unknown): Endpoint | undefined {
  if (!e || typeof e !== 'object') return undefined
  const { serviceName, ipv4, ipv6, port } = e as Endpoint
  const out: Endpoint = {}
  if (typeof serviceName === 'string' && serviceName !== '') out.serviceName = serviceName.toLowerCase()
  if (typeof ipv4 === 'string') out.ipv4 = ipv4
  if (typeof ipv6 === 'string') out.ipv6 = ipv6
  if (typeof port === 'number' && port > 0) out.port = port
  return Object.keys(out).length ? out : undefined
}

/** A posted span as Zipkin stores it; throws Zipkin's message for a span it refuses. */
function normalize(input: unknown): Span {
  if (!input || typeof input !== 'object') throw new Error('a span should be an object')
  const s = input as Record<string, unknown>
  const span: Span = { traceId: normalizeId(s.traceId, 'traceId', true), id: normalizeId(s.id, 'id') }
  if (s.parentId !== undefined && s.parentId !== null) span.parentId = normalizeId(s.parentId, 'parentId')
  if (typeof s.name === 'string' && s.name !== '') span.name = s.name.toLowerCase()
  if (typeof s.kind === 'string') span.kind = s.kind
  if (typeof s.timestamp === 'number' && s.timestamp > 0) span.timestamp = Math.trunc(s.timestamp)
  if (typeof s.duration === 'number' && s.duration > 0) span.duration = Math.trunc(s.duration)
  const local = endpoint(s.localEndpoint)
  const remote = endpoint(s.remoteEndpoint)
  if (local) span.localEndpoint = local
  if (remote) span.remoteEndpoint = remote
  if (Array.isArray(s.annotations) && s.annotations.length) {
    span.annotations = (s.annotations as Array<{ timestamp: number; value: string }>)
      .map((a) => ({ timestamp: Math.trunc(Number(a.timestamp)), value: String(a.value) }))
      .sort((a, b) => a.timestamp - b.timestamp || a.value.localeCompare(b.value))
  }
  if (s.tags && typeof s.tags === 'object' && Object.keys(s.tags).length)
    span.tags = Object.fromEntries(Object.entries(s.tags).map(([k, v]) => [k, String(v)]))
  if (s.debug === true) span.debug = true
  if (s.shared === true) span.shared = true
  return span
}

/** Microseconds, the earliest span's timestamp of a trace (Zipkin orders and windows traces by it). */
const startOf = (trace: Span[]): number => Math.min(...trace.map((s) => s.timestamp ?? Infinity))

export class ZipkinCollector {
  /** Spans by trace id, in the order they came. */
  private readonly traces = new Map<string, Span[]>()

  /** The answer of a request to the collector; `now` the spec's clock in ms (endTs's default). */
  answer(req: UpstreamRequest, now: number): UpstreamAnswer | { raise: string } {
    const path = req.path.replace(/\/+$/, '')
    const query = new URLSearchParams(req.query)
    if (path === '/api/v2/spans' && req.method === 'POST') return this.post(req.body)
    if (req.method === 'GET') {
      if (path === '/api/v2/traces') return ok(this.query(query, now))
      const one = /^\/api\/v2\/trace\/([^/]+)$/.exec(path)
      if (one) return this.trace(decodeURIComponent(one[1]!))
      if (path === '/api/v2/traceMany') {
        const ids = (query.get('traceIds') ?? '').split(',').filter(Boolean)
        return ok(ids.map((id) => this.find(id)).filter((t) => t !== undefined))
      }
      if (path === '/api/v2/services') return ok(this.names((s) => [s.localEndpoint?.serviceName]))
      if (path === '/api/v2/remoteServices') {
        const service = query.get('serviceName')?.toLowerCase()
        return ok(this.names((s) => (s.localEndpoint?.serviceName === service ? [s.remoteEndpoint?.serviceName] : [])))
      }
      if (path === '/api/v2/spans') {
        const service = query.get('serviceName')?.toLowerCase()
        return ok(this.names((s) => (s.localEndpoint?.serviceName === service ? [s.name] : [])))
      }
    }
    return {
      raise: `the Zipkin collector in process does not emulate ${req.method} ${req.path} (it answers POST /api/v2/spans and GET /api/v2/traces, /api/v2/trace/<id>, /api/v2/traceMany, /api/v2/services, /api/v2/remoteServices, /api/v2/spans)`,
    }
  }

  private post(body: string): UpstreamAnswer {
    let spans: Span[]
    try {
      const list = JSON.parse(body) as unknown
      if (!Array.isArray(list)) throw new Error('expected a JSON array of spans')
      spans = list.map(normalize)
    } catch (e) {
      return bad(400, `Expected a JSON_V2 encoded list: ${e instanceof Error ? e.message : String(e)}\n`)
    }
    for (const span of spans) {
      const trace = this.traces.get(span.traceId) ?? []
      trace.push(span)
      this.traces.set(span.traceId, trace)
    }
    return { status: 202, headers: {}, body: '' }
  }

  private find(id: string): Span[] | undefined {
    try {
      return this.traces.get(normalizeId(id, 'traceId', true))
    } catch {
      return undefined
    }
  }

  private trace(id: string): UpstreamAnswer {
    const trace = this.find(id)
    return trace ? ok(trace) : bad(404, `Trace not found: ${id}\n`)
  }

  private names(of: (s: Span) => Array<string | undefined>): string[] {
    const all = new Set<string>()
    for (const trace of this.traces.values())
      for (const span of trace) for (const n of of(span)) if (n !== undefined) all.add(n)
    return [...all].sort()
  }

  /** GET /api/v2/traces: the traces with a span matching every criterion given, the latest first, up to `limit`. */
  private query(q: URLSearchParams, now: number): Span[][] {
    const service = q.get('serviceName')?.toLowerCase()
    const remote = q.get('remoteServiceName')?.toLowerCase()
    const name = q.get('spanName')?.toLowerCase()
    const terms = (q.get('annotationQuery') ?? '').split(/\s+and\s+/).filter(Boolean)
    const min = q.has('minDuration') ? Number(q.get('minDuration')) : undefined
    const max = q.has('maxDuration') ? Number(q.get('maxDuration')) : undefined
    const endTs = (q.has('endTs') ? Number(q.get('endTs')) : now) * 1000
    const lookback = (q.has('lookback') ? Number(q.get('lookback')) : 86_400_000) * 1000
    const limit = q.has('limit') ? Number(q.get('limit')) : 10
    const matches = (s: Span): boolean =>
      (service === undefined || s.localEndpoint?.serviceName === service) &&
      (remote === undefined || s.remoteEndpoint?.serviceName === remote) &&
      (name === undefined || s.name === name) &&
      (min === undefined || (s.duration ?? 0) >= min) &&
      (max === undefined || (s.duration ?? 0) <= max)
    const annotated = (trace: Span[], term: string): boolean => {
      const [key, value] = term.split('=', 2) as [string, string | undefined]
      return trace.some((s) =>
        value === undefined
          ? (s.tags && key in s.tags) || s.annotations?.some((a) => a.value === key)
          : s.tags?.[key] === value,
      )
    }
    return [...this.traces.values()]
      .filter((trace) => trace.some(matches) && terms.every((t) => annotated(trace, t)))
      .filter((trace) => {
        const start = startOf(trace)
        return start === Infinity || (start <= endTs && start >= endTs - lookback)
      })
      .sort((a, b) => startOf(b) - startOf(a))
      .slice(0, limit)
  }
}
