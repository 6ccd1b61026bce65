/**
 * Kong's mock upstream, answered in process: what its endpoints send back, the request echoed in
 * the JSON shape Kong's specs read (`headers`, `uri`, `url`, `uri_args`, `post_data`, `vars`),
 * marked `X-Powered-By: mock_upstream` as Kong's is.
 */
import type { HeadersTable } from './pdk.js'

export const MOCK_HOST = '127.0.0.1'
export const MOCK_PORT = 15555
/** Kong's mock upstream's TLS listener (helpers.mock_upstream_ssl_port). */
export const MOCK_SSL_PORT = 15556

export interface UpstreamRequest {
  method: string
  path: string
  query: string
  headers: HeadersTable
  body: string
}

export interface UpstreamAnswer {
  status: number
  headers: Record<string, string>
  body: string
}

/** Query string → Kong's uri_args: a name given twice is a list, a name without `=` is true. */
export function parseArgs(query: string): Record<string, string | boolean | Array<string | boolean>> {
  const out: Record<string, string | boolean | Array<string | boolean>> = {}
  for (const part of query.split('&')) {
    if (!part) continue
    const eq = part.indexOf('=')
    const key = decodeURIComponent((eq < 0 ? part : part.slice(0, eq)).replace(/\+/g, ' '))
    const value: string | boolean = eq < 0 ? true : decodeURIComponent(part.slice(eq + 1).replace(/\+/g, ' '))
    const had = out[key]
    out[key] = had === undefined ? value : ([] as Array<string | boolean>).concat(had, value)
  }
  return out
}

/** The text fields of a multipart/form-data body, by name (a file part's content as text). */
function multipart(type: string, body: string): Record<string, string> {
  const boundary = /boundary="?([^";]+)"?/i.exec(type)?.[1]
  if (!boundary) return {}
  const out: Record<string, string> = {}
  for (const part of body.split(`--${boundary}`)) {
    const split = part.indexOf('\r\n\r\n')
    if (split < 0) continue
    const name = /name="([^"]*)"/i.exec(part.slice(0, split))?.[1]
    if (name !== undefined) out[name] = part.slice(split + 4).replace(/\r\n$/, '')
  }
  return out
}

/**
 * post_data as Kong's mock upstream reports it: the kind follows the Content-Type alone (form,
 * multipart-form, json; unknown otherwise, params null), and a body that type cannot read is
 * `<kind> (error)` with params null and the error.
 */
function postData(headers: Record<string, string | string[]>, body: string) {
  const type = String(headers['content-type'] ?? '')
  if (type.includes('application/x-www-form-urlencoded')) return { text: body, kind: 'form', params: parseArgs(body) }
  if (type.includes('multipart/form-data')) return { text: body, kind: 'multipart-form', params: multipart(type, body) }
  if (type.includes('application/json')) {
    try {
      return { text: body, kind: 'json', params: JSON.parse(body) as unknown }
    } catch (e) {
      return { text: body, kind: 'json (error)', params: null, error: String(e) }
    }
  }
  return { text: body, kind: 'unknown', params: null }
}

const lowerKeys = (h: HeadersTable): Record<string, string | string[]> =>
  Object.fromEntries(Object.entries(h).map(([k, v]) => [k.toLowerCase(), v]))

/** The mock upstream's answer to a request it was sent (`client` is the peer Kong saw, `now` its clock in ms). */
export function mockUpstream(req: UpstreamRequest, client: string, now = Date.now()): UpstreamAnswer {
  const headers = lowerKeys(req.headers)
  const json = { 'Content-Type': 'application/json', 'X-Powered-By': 'mock_upstream', Server: 'mock-upstream/1.0.0' }
  // /timestamp: no body, its ngx.now() in Server-Time (response-ratelimiting's specs wait for a new second on it)
  if (req.path === '/timestamp')
    return { status: 200, headers: { 'Content-Type': 'text/plain', 'Server-Time': String(now / 1000) }, body: '' }
  // /status/<code>: that status, with the echo and the code (Kong's mock upstream merges them)
  const status = /^\/status\/(\d{3})$/.exec(req.path)
  const code = status ? Number(status[1]) : undefined
  if (req.path.startsWith('/headers')) return { status: 200, headers: json, body: JSON.stringify({ headers }) }
  if (req.path.startsWith('/xml')) {
    const body = '<?xml version="1.0" encoding="UTF-8"?>\n<note><body>You are using mock upstream</body></note>\n'
    return { status: 200, headers: { ...json, 'Content-Type': 'application/xml' }, body }
  }
  if (code === undefined && req.path === '/post' && req.method !== 'POST')
    return { status: 405, headers: json, body: JSON.stringify({ message: 'Method not allowed' }) }
  const host = String(headers.host ?? `${MOCK_HOST}:${MOCK_PORT}`)
  const uri = req.path + (req.query ? `?${req.query}` : '')
  // nginx's $uri: the path decoded (a query string's encoding stays in request_uri and url)
  let decoded = req.path
  try {
    decoded = decodeURIComponent(req.path)
  } catch {
    // a malformed escape stays as sent
  }
  const echo = {
    headers,
    uri: decoded,
    url: `http://${host}${uri}`,
    uri_args: parseArgs(req.query),
    post_data: postData(headers, req.body),
    vars: {
      request: `${req.method} ${uri} HTTP/1.1`,
      request_uri: uri,
      uri: decoded,
      host: host.replace(/:\d+$/, ''),
      hostname: 'localhost',
      scheme: 'http',
      https: '',
      remote_addr: client,
      server_addr: MOCK_HOST,
      server_name: 'localhost',
      server_port: String(MOCK_PORT),
      ssl_server_name: 'no SNI',
      request_method: req.method,
    },
  }
  if (code !== undefined) return { status: code, headers: json, body: JSON.stringify({ ...echo, code }) }
  // /response-headers: the echo, with the query's arguments as response headers
  if (req.path === '/response-headers') {
    const extra = Object.fromEntries(Object.entries(echo.uri_args).map(([k, v]) => [k, String(v)]))
    return { status: 200, headers: { ...json, ...extra }, body: JSON.stringify(echo) }
  }
  // /cache/<n>: the echo, cacheable for n seconds
  const cache = /^\/cache\/(\d+)$/.exec(req.path)
  if (cache) {
    const headers = { ...json, 'Cache-Control': `public, max-age=${cache[1]}` }
    return { status: 200, headers, body: JSON.stringify(echo) }
  }
  // a path none of its locations serves: 404, with the echo
  if (!KNOWN.some((re) => re.test(req.path))) return { status: 404, headers: json, body: JSON.stringify(echo) }
  return { status: 200, headers: json, body: JSON.stringify(echo) }
}

/** The mock upstream's locations that answer (Kong's test nginx template); any other path is its 404. */
const KNOWN = [
  /^\/$/,
  /^\/get/,
  /^\/post/,
  /^\/(request|anything)/,
  /^\/timestamp$/,
  /^\/hop-by-hop$/,
  /^\/cache\/\d+$/,
  /^\/basic-auth\/[A-Za-z0-9_]+\/.+$/,
  /^\/delay\/\d{1,3}$/,
  /^\/stream\/\d+$/,
]
