/**
 * What answers a request Kong in process proxies: the body as nginx reads it (a chunked one
 * dechunked) and the service, Kong's mock upstream with Kong's proxy headers added, or a 502
 * naming a service that is not emulated.
 */
import { mockUpstream, MOCK_HOST, MOCK_PORT, MOCK_SSL_PORT, type UpstreamAnswer } from './mock-upstream.js'
import type { HeadersTable } from './pdk.js'

type Row = { id: string; [k: string]: unknown }

/** A chunked body as nginx reads it: the chunks' data joined (undefined when it is not well framed). */
export function dechunk(body: string): string | undefined {
  let out = ''
  let at = 0
  for (;;) {
    const eol = body.indexOf('\r\n', at)
    if (eol < 0) return undefined
    const size = parseInt(body.slice(at, eol).split(';')[0]!, 16)
    if (Number.isNaN(size)) return undefined
    if (size === 0) return out
    out += body.slice(eol + 2, eol + 2 + size)
    at = eol + 2 + size + 2
  }
}

export const isLocal = (service: Row | undefined) => service?.host === MOCK_HOST || service?.host === 'localhost'

const json = (status: number, body: unknown, extra: Record<string, string> = {}) => ({
  status,
  headers: { 'Content-Type': 'application/json; charset=utf-8', ...extra },
  body: JSON.stringify(body),
})

/** The service's answer: the mock upstream's, or a 502 naming a service that is not emulated. */
export function serviceAnswer(
  service: Row | undefined,
  route: Row,
  sent: { method: string; path: string; query: string; headers: HeadersTable; body: string },
  client: string,
  hostHeader: string,
  /** The client as Kong's trusted_ips and real_ip_header make it out (the peer, without them). */
  realClient = client,
  /** The spec's clock, in ms (the mock upstream's ngx.now()). */
  now = Date.now(),
  /** The scheme and port the client reached Kong on (its X-Forwarded-Proto and X-Forwarded-Port). */
  listener: { scheme: string; port: number } = { scheme: 'http', port: 9000 },
): UpstreamAnswer {
  const host = String(service?.host ?? '')
  const port = Number(service?.port ?? 80)
  // the mock upstream's TLS port answers as its plain one (no TLS is spoken in process)
  if (!(isLocal(service) && (port === MOCK_PORT || port === MOCK_SSL_PORT))) {
    return json(502, {
      message: `broker pdk test: the service ${String(service?.protocol ?? 'http')}://${host}:${port} is not emulated; only Kong's mock upstream (${MOCK_HOST}:${MOCK_PORT}) answers in process`,
    })
  }
  const headers: HeadersTable = { ...sent.headers }
  const set = (name: string, value: string) => {
    const had = Object.keys(headers).find((k) => k.toLowerCase() === name.toLowerCase())
    if (had === undefined) headers[name] = value
    return had
  }
  // Kong's proxy headers, as the upstream sees them
  const had = Object.keys(headers).find((k) => k.toLowerCase() === 'host')
  if (had !== undefined && route.preserve_host !== true) delete headers[had]
  set('host', `${host}:${port}`)
  set('x-forwarded-for', client)
  set('x-forwarded-proto', listener.scheme)
  set('x-forwarded-host', hostHeader.replace(/:\d+$/, ''))
  set('x-forwarded-port', String(listener.port))
  set('x-forwarded-path', sent.path)
  // Kong sends the client it made out as X-Real-IP; the mock upstream, in the same nginx, makes it out too
  const real = set('x-real-ip', realClient)
  if (real !== undefined) headers[real] = realClient
  return mockUpstream({ ...sent, headers }, realClient, now)
}
