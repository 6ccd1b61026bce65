/**
 * Kong's router for the routes a spec inserted, the part plugin specs lean on: `hosts` (with a
 * leading or trailing `*` wildcard), `paths` (prefixes, and `~` regexes), `methods`, `headers` and
 * `protocols` (the request's scheme; a grpc or grpcs route takes any HTTP request).
 * When several match, the one matching more of those wins, then the higher regex_priority, then
 * the longer path, then the one inserted first.
 */

/** A route row as spec.helpers' blueprints keep it. */
export interface RouteRow {
  id: string
  hosts?: string[]
  paths?: string[]
  methods?: string[]
  headers?: Record<string, string[]>
  protocols?: string[]
  regex_priority?: number
  [k: string]: unknown
}

export interface RouteRequest {
  method: string
  /** Host header, without its port. */
  host: string
  path: string
  headers: Record<string, string | string[]>
  protocol: string
}

const list = (v: unknown): string[] => (Array.isArray(v) ? (v as string[]) : [])
// Kong's router matches a gRPC route on any HTTP request, whatever its scheme; whether the request
// fits it (gRPC, over HTTP/2, TLS for grpcs only), Kong's runloop checks after the match (grpc/runloop.ts)
const HTTP = new Set(['http', 'https'])
const isGrpc = (protocols: string[]) => protocols.includes('grpc') || protocols.includes('grpcs')
// nor on http or https: a route for http alone takes an https request, and one for https alone an http request,
// which Kong's runloop then refuses (httpsRequired)
const takesHttp = (protocols: string[], protocol: string) =>
  HTTP.has(protocol) && (isGrpc(protocols) || protocols.some((p) => HTTP.has(p)))

function hostMatches(pattern: string, host: string): boolean {
  const p = pattern.toLowerCase().replace(/:\d+$/, '')
  if (p.startsWith('*.')) return host.endsWith(p.slice(1)) && host.length > p.length - 1
  if (p.endsWith('.*')) return host.startsWith(p.slice(0, -1)) && host.length > p.length - 1
  return p === host
}

/** The length of the path a route's `paths` match (0 when it has none), or -1 when none matches. */
function pathMatch(paths: string[], path: string): number {
  if (!paths.length) return 0
  let best = -1
  for (const p of paths) {
    if (p.startsWith('~')) {
      const m = pcre(p.slice(1))?.exec(path)
      if (m) best = Math.max(best, m[0].length)
    } else if (path.startsWith(p)) best = Math.max(best, p.length)
  }
  return best
}

/** A route's regex path as JavaScript reads it: PCRE's `(?P<name>` groups are `(?<name>`; one JS cannot read matches nothing. */
function pcre(source: string): RegExp | undefined {
  try {
    return new RegExp('^' + source.replace(/\(\?P</g, '(?<'))
  } catch {
    return undefined
  }
}

function headersMatch(wanted: Record<string, string[]> | undefined, got: RouteRequest['headers']): boolean {
  for (const [name, values] of Object.entries(wanted ?? {})) {
    const key = Object.keys(got).find((k) => k.toLowerCase() === name.toLowerCase())
    const have = key === undefined ? [] : ([] as string[]).concat(got[key]!).map((v) => v.toLowerCase())
    if (!list(values).some((v) => have.includes(v.toLowerCase()))) return false
  }
  return true
}

/** The route Kong would pick for a request, or undefined (Kong's 404 "no Route matched"). */
export function matchRoute<R extends RouteRow>(routes: readonly R[], req: RouteRequest): R | undefined {
  let best: { route: R; score: number[] } | undefined
  routes.forEach((route, order) => {
    const protocols = list(route.protocols)
    if (protocols.length && !protocols.includes(req.protocol) && !takesHttp(protocols, req.protocol)) return
    const hosts = list(route.hosts)
    if (hosts.length && !hosts.some((h) => hostMatches(h, req.host))) return
    const methods = list(route.methods).map((m) => m.toUpperCase())
    if (methods.length && !methods.includes(req.method)) return
    if (!headersMatch(route.headers, req.headers)) return
    const length = pathMatch(list(route.paths), req.path)
    if (length < 0) return
    const matched = [hosts, methods, list(route.paths), Object.keys(route.headers ?? {})].filter((x) => x.length).length
    const score = [matched, route.regex_priority ?? 0, length, -order]
    if (!best || compare(score, best.score) > 0) best = { route, score }
  })
  return best?.route
}

const compare = (a: number[], b: number[]): number => {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i]! - b[i]!
  return 0
}

/**
 * What Kong's runloop answers, once its router matched, a request over plain http to a route for https alone:
 * the route's https_redirect_status_code, 426 "Please use HTTPS protocol" by default (an upgrade asked for), or
 * a redirect to the same URI over https. Undefined when the request may go on.
 */
export function httpsRequired(
  route: RouteRow,
  scheme: string,
  host: string,
  requestUri: string,
): { status: number; headers: Record<string, string>; body: string } | undefined {
  const protocols = list(route.protocols)
  if (!protocols.includes('https') || protocols.includes('http') || scheme === 'https') return undefined
  const status = typeof route.https_redirect_status_code === 'number' ? route.https_redirect_status_code : 426
  if ([301, 302, 307, 308].includes(status))
    return { status, headers: { Location: `https://${host}${requestUri}` }, body: '' }
  return {
    status: 426,
    headers: {
      'Content-Type': 'application/json; charset=utf-8',
      Connection: 'Upgrade',
      Upgrade: 'TLS/1.2, HTTP/1.1',
    },
    body: JSON.stringify({ message: 'Please use HTTPS protocol' }),
  }
}
