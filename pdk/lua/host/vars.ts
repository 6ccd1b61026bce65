/**
 * nginx's variables (`ngx.var.*`) as the http module, the upstream module and Kong's nginx template
 * define them, read from the kit's request state. An unknown name reads as nil and refuses a write,
 * as nginx does; one nginx has that broker does not answer (the manifest's `not emulated` ones) reads
 * as nil too, with a warning naming it. `VARIABLES` is what this file answers; manifest.test.ts holds it
 * equal to the manifest's list (pdk/lua/manifest/variables.ts), which docs/lua-plugins.md shows.
 */
import { hostname } from 'node:os'
import ipaddr from 'ipaddr.js'
import type { Context } from '../../kit/context.js'
import { formatLine } from '../../kit/log/line.js'
import type { HeaderList } from '../../kit/private/headers.js'
import { currentHeaders } from '../../kit/request/index.js'
import { upstreamHost, upstreamUri } from '../../kit/private/upstream.js'
import { variableNamed } from '../manifest/index.js'
import type { HostOp } from './types.js'

const HOST = hostname()
const NGINX_VERSION = '1.25.3'
const pad = (n: number, w = 2) => String(n).padStart(w, '0')
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec']
const seconds = (ms: number) => (ms / 1000).toFixed(3)

/** The variables Kong's nginx template declares with `set` (writable, "" until written). */
const KONG_SET = [
  'ctx_ref',
  'upstream_te',
  'upstream_via',
  'upstream_upgrade',
  'upstream_connection',
  'upstream_x_forwarded_for',
  'upstream_x_forwarded_proto',
  'upstream_x_forwarded_host',
  'upstream_x_forwarded_port',
  'upstream_x_forwarded_path',
  'upstream_x_forwarded_prefix',
]

/** Built-in variables a plugin may write (besides Kong's `set` ones). */
export const WRITABLE = new Set(['args', 'upstream_uri', 'upstream_host', 'upstream_scheme', 'limit_rate', ...KONG_SET])

/** nginx's answer to a write it refuses. */
export function writeRefusal(name: string): string | undefined {
  if (WRITABLE.has(name)) return undefined
  if (Object.hasOwn(FIXED, name) || QUERY.includes(name) || PREFIXES.some((p) => name.startsWith(p)))
    return `variable "${name}" not changeable`
  return `variable "${name}" not found for writing; maybe it is a built-in variable that is not changeable or you forgot to use "set $${name} '';" in the config file to define it first`
}

const pathOf = (ctx: Context) => {
  const q = ctx.request.uri.indexOf('?')
  return q === -1 ? ctx.request.uri : ctx.request.uri.slice(0, q)
}
const protocol = (ctx: Context) => {
  const v = ctx.request.httpVersion
  return v === undefined ? undefined : `HTTP/${v === 2 ? '2.0' : v === 3 ? '3.0' : v}`
}
/** The request line as the client sent it. */
const requestLine = (ctx: Context) => `${ctx.request.method} ${ctx.request.uri} ${protocol(ctx) ?? 'HTTP/1.1'}`
/** Bytes of `Name: value\r\n` lines and the blank line after them. */
const headerBytes = (h: HeaderList) => {
  let n = 2
  for (const [name, value] of Object.entries(h.table(Infinity, (k) => k).headers))
    for (const v of Array.isArray(value) ? value : [value]) n += Buffer.byteLength(`${name}: ${v}\r\n`)
  return n
}
const proxied = (ctx: Context) => ctx.response.service
const afterUpstream = (ctx: Context, v: string) => (proxied(ctx) ? v : undefined)
const inLog = (ctx: Context) => ctx.phase === 'log'
const bodyBytes = (ctx: Context) => (inLog(ctx) ? (ctx.response.body?.length ?? 0) : 0)
/** A header's values as nginx joins them for $http_*, $sent_http_*, $upstream_http_*. */
const joined = (h: HeaderList | undefined, name: string) => {
  const all = h?.all(name.replace(/_/g, '-')) ?? []
  return all.length === 0 ? undefined : all.join(name === 'cookie' ? '; ' : ', ')
}
const cookie = (header: string | undefined, want: string) => {
  for (const c of (header ?? '').split(';')) {
    const [k, ...v] = c.trim().split('=')
    if (k === want) return v.join('=')
  }
  return undefined
}
const basicUser = (ctx: Context) => {
  const m = /^Basic\s+(\S+)/i.exec(ctx.request.headers.get('authorization') ?? '')
  if (!m) return undefined
  const text = Buffer.from(m[1]!, 'base64').toString('utf8')
  return text.includes(':') ? text.slice(0, text.indexOf(':')) : undefined
}
const tls = (ctx: Context) => ctx.request.scheme === 'https' || ctx.request.scheme === 'tls'
const timeLocal = (d: Date) =>
  `${pad(d.getUTCDate())}/${MONTHS[d.getUTCMonth()]}/${d.getUTCFullYear()}:${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())} +0000`
const serviceAddr = (ctx: Context) => `${ctx.upstream.host}:${ctx.upstream.port}`
const xff = (ctx: Context) => {
  const prior = ctx.request.headers.all('x-forwarded-for').join(', ')
  return prior ? `${prior}, ${ctx.forwarded.ip}` : ctx.forwarded.ip
}

type Reader = (ctx: Context) => string | Buffer | undefined

/** Variables with a fixed name: nginx's http core, upstream and SSL modules, then Kong's template. */
const FIXED: Record<string, Reader> = {
  request: requestLine,
  request_uri: (c) => c.request.uri,
  uri: (c) => decodeURIComponent(pathOf(c)),
  document_uri: (c) => decodeURIComponent(pathOf(c)),
  request_method: (c) => c.request.method,
  request_length: (c) =>
    String(Buffer.byteLength(`${requestLine(c)}\r\n`) + headerBytes(c.request.headers) + c.request.body.length),
  request_body: (c) => (c.request.body.length ? c.request.body : undefined),
  request_time: (c) => seconds(c.clock.now() - c.startTime),
  request_id: (c) => c.requestId,
  host: (c) => c.request.host,
  hostname: () => HOST,
  scheme: (c) => c.request.scheme,
  https: (c) => (c.request.scheme === 'https' ? 'on' : ''),
  http2: (c) => (c.request.httpVersion === 2 ? (c.request.scheme === 'https' ? 'h2' : 'h2c') : ''),
  server_name: () => 'kong',
  server_addr: () => '127.0.0.1',
  server_port: (c) => String(c.request.port),
  server_protocol: protocol,
  content_type: (c) => c.request.headers.get('content-type'),
  content_length: (c) => c.request.headers.get('content-length'),
  remote_addr: (c) => c.forwarded.ip,
  remote_port: (c) => (c.forwarded.port === undefined ? undefined : String(c.forwarded.port)),
  binary_remote_addr: (c) =>
    ipaddr.isValid(c.forwarded.ip) ? Buffer.from(ipaddr.parse(c.forwarded.ip).toByteArray()) : undefined,
  realip_remote_addr: (c) => c.request.peer.ip,
  realip_remote_port: (c) => String(c.request.peer.port),
  remote_user: basicUser,
  connection: (c) => String(c.request.peer.connection ?? 1),
  connection_requests: (c) => String(c.request.peer.requests ?? 1),
  connection_time: (c) => seconds(c.clock.now() - c.startTime),
  pid: () => String(process.pid),
  msec: (c) => (c.clock.now() / 1000).toFixed(3),
  time_local: (c) => timeLocal(new Date(c.clock.now())),
  time_iso8601: (c) => `${new Date(c.clock.now()).toISOString().slice(0, 19)}+00:00`,
  nginx_version: () => NGINX_VERSION,
  status: (c) => String(c.response.status),
  bytes_sent: (c) =>
    String(
      inLog(c)
        ? Buffer.byteLength(`HTTP/1.1 ${c.response.status}\r\n`) + headerBytes(c.response.headers) + bodyBytes(c)
        : 0,
    ),
  body_bytes_sent: (c) => String(bodyBytes(c)),
  upstream_status: (c) => afterUpstream(c, String(c.response.service?.status)),
  upstream_addr: (c) => afterUpstream(c, serviceAddr(c)),
  upstream_connect_time: (c) => afterUpstream(c, '0.000'),
  upstream_header_time: (c) => afterUpstream(c, '0.000'),
  upstream_response_time: (c) => afterUpstream(c, '0.000'),
  upstream_response_length: (c) => afterUpstream(c, String(c.response.service?.body.length)),
  upstream_bytes_received: (c) =>
    afterUpstream(
      c,
      String(
        Buffer.byteLength(`HTTP/1.1 ${c.response.service?.status}\r\n`) +
          headerBytes(c.response.service!.headers) +
          c.response.service!.body.length,
      ),
    ),
  upstream_bytes_sent: (c) =>
    afterUpstream(
      c,
      String(
        Buffer.byteLength(`${c.upstream.method} ${c.upstream.path} HTTP/1.1\r\n`) +
          headerBytes(c.upstream.headers) +
          c.upstream.body.length,
      ),
    ),
  ssl_protocol: (c) => (tls(c) ? 'TLSv1.3' : undefined),
  ssl_cipher: (c) => (tls(c) ? 'TLS_AES_256_GCM_SHA384' : undefined),
  ssl_server_name: (c) => (tls(c) ? c.request.host : undefined),
  ssl_session_reused: (c) => (tls(c) ? '.' : ''),
  ssl_client_verify: (c) => (tls(c) ? (c.request.tlsChain ? 'SUCCESS' : 'NONE') : undefined),
  ssl_client_raw_cert: (c) =>
    /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----\n?/.exec(c.request.tlsChain ?? '')?.[0],
  proxy_protocol_addr: () => '',
  proxy_protocol_port: () => '',
  limit_rate: () => '0',
  kong_proxy_mode: () => 'http',
  // lua-kong-nginx-module's request id, which Kong 3.5+ sends upstream and puts in error bodies
  kong_request_id: (c) => c.requestId,
  // Kong's runloop sets these before the service is called (kong/runloop/handler.lua)
  upstream_x_forwarded_for: xff,
  upstream_x_forwarded_proto: (c) => c.request.scheme,
  upstream_x_forwarded_host: (c) => c.request.host,
  upstream_x_forwarded_port: (c) => String(c.request.port),
  upstream_x_forwarded_path: (c) => decodeURIComponent(pathOf(c)),
  upstream_x_forwarded_prefix: (c) => c.data.strippedPrefix,
  upstream_scheme: (c) => c.upstream.scheme,
  upstream_uri: upstreamUri,
  // the Host header nginx sends the service (Kong's proxy_set_header Host $upstream_host)
  upstream_host: upstreamHost,
  ctx_ref: () => '',
  upstream_te: (c) => (/\btrailers\b/i.test(c.request.headers.get('te') ?? '') ? 'trailers' : ''),
  upstream_via: () => '',
  upstream_upgrade: (c) => c.request.headers.get('upgrade') ?? '',
  upstream_connection: (c) => (c.request.headers.get('upgrade') ? 'upgrade' : 'keep-alive'),
}

/** The query's variables, which ngx.ts answers from the query a plugin may have changed. */
const QUERY = ['args', 'is_args', 'query_string']

/** Families of variables named by a prefix: headers, cookies, arguments. */
const PREFIXES = ['http_', 'sent_http_', 'upstream_http_', 'cookie_', 'upstream_cookie_', 'arg_']

/** The variables broker answers: fixed names, then the prefixed families. */
export const VARIABLES: readonly string[] = [
  ...[...Object.keys(FIXED), ...QUERY].sort(),
  ...PREFIXES.map((p) => `${p}*`),
]

/** A variable's value (nil as undefined); `firstArg` answers $arg_<name> from the query as nginx reads it. */
export function readVariable(
  ctx: Context,
  name: string,
  firstArg: (name: string) => string | undefined,
): string | Buffer | undefined {
  if (Object.hasOwn(FIXED, name)) return FIXED[name]!(ctx)
  // what plugins set or cleared since, as nginx's headers_in holds it (Host stays the client's)
  if (name.startsWith('http_')) return joined(currentHeaders(ctx), name.slice(5))
  if (name.startsWith('sent_http_')) return joined(ctx.response.headers, name.slice(10))
  if (name.startsWith('upstream_http_')) return joined(ctx.response.service?.headers, name.slice(14))
  if (name.startsWith('cookie_')) return cookie(ctx.request.headers.get('cookie'), name.slice(7))
  if (name.startsWith('upstream_cookie_')) {
    // the first name=value of each Set-Cookie the service sent
    const firsts = (ctx.response.service?.headers.all('set-cookie') ?? []).map((c) => c.split(';')[0])
    return cookie(firsts.join(';'), name.slice(16))
  }
  if (name.startsWith('arg_')) return firstArg(name.slice(4))
  return unanswered(ctx, name)
}

// the variables of nginx's each request was warned about (once a request: each replay's log stands alone)
const warned = new WeakMap<Context, Set<string>>()

/**
 * nil, as OpenResty reads a name nginx does not have; a variable nginx in Kong has but broker does not
 * answer also logs a warning naming it, the first time a request reads it, so a plugin's nil is explained.
 */
function unanswered(ctx: Context, name: string): undefined {
  const known = variableNamed(name)
  if (known?.status !== 'not emulated') return undefined
  let seen = warned.get(ctx)
  if (!seen) warned.set(ctx, (seen = new Set()))
  if (seen.has(name)) return undefined
  seen.add(name)
  const message = `ngx.var.${name} reads nil: broker does not emulate nginx's $${name} (${known.doc})`
  ctx.logs.push({ level: 'warn', line: formatLine(ctx, 'warn', message, 'broker', ctx.plugin?.name) })
  return undefined
}

/** ngx.req.raw_header: the request line (unless left out) and the client's headers as they came, CRLF-ended. */
export const VAR_OPS: Record<string, HostOp> = {
  raw_header: (s, noRequestLine) => {
    if (!s.ctx) throw new Error('API disabled in the current context')
    const ctx = s.ctx
    let out = noRequestLine === true ? '' : `${requestLine(ctx)}\r\n`
    for (const [name, value] of Object.entries(ctx.request.headers.table(Infinity, (k) => k).headers))
      for (const v of Array.isArray(value) ? value : [value]) out += `${name}: ${v}\r\n`
    return [`${out}\r\n`]
  },
}
