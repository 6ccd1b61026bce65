/** The request state behind ngx.var, ngx.req, ngx.header and ngx.status, read from the kit's context. */
import ipaddr from 'ipaddr.js'
import type { Context } from '../../kit/context.js'
import { currentHeaders } from '../../kit/request/index.js'
import { argVariable, decodeArgsWith, unescapeBytes, type ArgsLimit } from '../../kit/private/args.js'
import {
  setUpstreamHost,
  setUpstreamPath,
  setUpstreamQuery,
  setUpstreamScheme,
  setUpstreamUri,
} from '../../kit/private/upstream.js'
import { bytesOf } from './codec.js'
import { readVariable, writeRefusal } from './vars.js'
import type { HostOp, HostState } from './types.js'
import { wallClock, type Clock } from '../../kit/private/clock.js'
import { textOrBytes } from '../../kit/private/bytes.js'

/** ngx.req/resp.get_headers' `raw`: names as they were given; otherwise lower-cased (the table then looks up any case). */
const keyOf = (raw: unknown) => (raw === true ? (n: string) => n : undefined)

// the wall clock in nanoseconds, advanced by the high-resolution clock (Date.now has milliseconds only)
const HR_START = process.hrtime.bigint()
const START_NS = Date.now() * 1e6
const pad = (n: number, w = 2) => String(n).padStart(w, '0')

/** The request's clock, or the runtime's outside a request. */
const clockOf = (s: HostState): Clock => s.ctx?.clock ?? s.clock

const need = (s: HostState): Context => {
  if (!s.ctx) throw new Error('API disabled in the current context')
  return s.ctx
}

/**
 * An argument as Lua gets it: the bytes it decodes to (a Lua string; text when they are UTF-8); a key as
 * the marshal reads a table key back (latin1 when not UTF-8).
 */
const luaArg = (raw: string): string | Buffer => textOrBytes(unescapeBytes(Buffer.from(raw, 'latin1')))
const luaKey = (k: string | Buffer): string => (typeof k === 'string' ? k : k.toString('latin1'))

/**
 * ngx.decode_args (`parts`: its C routine), or ngx.req.get_uri_args (`args`: resty.core's), through the kit's
 * one decoder; max nil (and a negative one for get_uri_args) is OpenResty's 100, 0 no limit.
 */
function decodeLuaArgs(query: unknown, max: unknown, limit: ArgsLimit): [Record<string, unknown>, string?] {
  const n = max === undefined || max === null ? 100 : Number(max)
  const text = bytesOf(query).toString('latin1')
  const { args, truncated } = decodeArgsWith(text, limit === 'args' && n < 0 ? 100 : n, limit, luaArg, luaKey)
  return truncated ? [args, 'truncated'] : [args]
}

/** Lua table → query text, as ngx.encode_args. */
export function encodeArgs(args: unknown): string {
  if (typeof args !== 'object' || args === null) throw new Error("bad argument #1 to 'encode_args' (table expected)")
  const enc = (s: unknown) => encodeURIComponent(bytesOf(s).toString('utf8')).replace(/%20/g, '%20')
  const parts: string[] = []
  for (const [k, v] of Object.entries(args)) {
    for (const x of Array.isArray(v) ? v : [v]) {
      if (x === true) parts.push(enc(k))
      else if (x !== false && x !== undefined) parts.push(`${enc(k)}=${enc(x)}`)
    }
  }
  return parts.join('&')
}

function variable(ctx: Context, vars: Map<string, unknown>, name: string): unknown {
  if (vars.has(name)) return vars.get(name)
  switch (name) {
    case 'args':
    case 'query_string':
      // nginx's $args: nil when the request has none (or a plugin set it to nil), "" when it was sent
      // as a bare "?" or set to ""
      if (ctx.upstream.query !== '') return ctx.upstream.query
      return (emptyArgs.get(ctx) ?? ctx.request.uri.includes('?')) ? '' : undefined
    case 'is_args':
      return ctx.upstream.query === '' ? '' : '?'
  }
  return readVariable(ctx, name, (arg) => argVariable(ctx.upstream.query, arg))
}

// whether an empty query reads as "" (after ngx.var.args = "") or nil (after ngx.var.args = nil)
const emptyArgs = new WeakMap<Context, boolean>()
const varsOf = new WeakMap<Context, Map<string, unknown>>()
const vars = (ctx: Context) => {
  let m = varsOf.get(ctx)
  if (!m) varsOf.set(ctx, (m = new Map()))
  return m
}

/** A write a plugin made through ngx, in the trace beside the kit calls. */
const record = (s: HostState, call: string, args: unknown[]): void => s.bridge.record?.({ call, args, returns: [] })

// RFC 7231's IMF-fixdate, which is what Date#toUTCString writes.
const httpDate = (d: Date) => d.toUTCString()
/** nginx's cookie time: dashes, and a two-digit year until 2037 (for Netscape 3, nginx says). */
const cookieDate = (d: Date) => {
  const year = d.getUTCFullYear()
  return d
    .toUTCString()
    .replace(/^(\w+), (\d+) (\w+) \d+/, `$1, $2-$3-${year > 2037 ? year : String(year % 100).padStart(2, '0')}`)
}

export const NGX_OPS: Record<string, HostOp> = {
  /** A call of broker's own Lua modules the trace shows (a queued entry). */
  trace: (s, call, ...args) => {
    s.bridge.record?.({ call: String(call), args, returns: [] })
    return []
  },
  null: () => [null],
  pid: () => [process.pid],
  shared_get: (s, k) => [need(s).shared.get(String(k))],
  shared_set: (s, k, v) => {
    const ctx = need(s)
    if (v === undefined || v === null) ctx.shared.delete(String(k))
    else ctx.shared.set(String(k), v)
    return []
  },
  var_get: (s, name) => [variable(need(s), vars(need(s)), String(name))],
  var_set: (s, name, value, as) => {
    const ctx = need(s)
    const n = String(name)
    const v = value === undefined || value === null ? undefined : bytesOf(value).toString('utf8')
    if (n === 'args' || n === 'query_string') {
      setUpstreamQuery(ctx, v ?? '')
      emptyArgs.set(ctx, v !== undefined)
    } else if (n === 'upstream_uri') setUpstreamUri(ctx, v ?? '/')
    // the variable kong.service.request.set_header("Host", …) writes in Kong
    else if (n === 'upstream_host') setUpstreamHost(ctx, v)
    else if (n === 'upstream_scheme' && v !== undefined) setUpstreamScheme(ctx, v)
    else {
      const refused = writeRefusal(n)
      if (refused) throw new Error(refused)
      vars(ctx).set(n, v)
    }
    record(s, typeof as === 'string' ? as : `ngx.var.${n}`, [value])
    return []
  },
  // ngx.req.set_uri changes $uri; Kong proxies HTTP to $upstream_uri (the router's, or set_path's),
  // so only a gRPC service, which nginx's grpc_pass sends $uri, receives the new path
  set_uri: (s, uri, jump) => {
    const ctx = need(s)
    if (jump === true) throw new Error('ngx.req.set_uri(uri, true) (an internal redirect) is not emulated by broker')
    const u = typeof uri === 'string' || Buffer.isBuffer(uri) ? bytesOf(uri).toString('utf8') : ''
    if (u === '') throw new Error("bad argument #1 to 'set_uri' (a non-empty string expected)")
    vars(ctx).set('uri', u)
    if (ctx.upstream.scheme === 'grpc' || ctx.upstream.scheme === 'grpcs') setUpstreamPath(ctx, u)
    record(s, 'ngx.req.set_uri', jump === undefined ? [uri] : [uri, jump])
    return []
  },
  phase: (s) => [s.ctx?.phase ?? 'init_worker'],
  now: (s) => [clockOf(s).now() / 1000],
  // a virtual clock's nanoseconds are its own; the wall clock's advance with the high-resolution clock
  time_ns: (s) => [
    clockOf(s) === wallClock ? Number(process.hrtime.bigint() - HR_START) + START_NS : clockOf(s).now() * 1e6,
  ],
  sleep: (s, sec) => {
    clockOf(s).sleep(Number(sec) * 1000)
    return []
  },
  monotonic_msec: () => [Math.floor(performance.now())],
  start_time: (s) => [(s.ctx?.startTime ?? clockOf(s).now()) / 1000],
  http_time: (_s, sec) => [httpDate(new Date(Number(sec) * 1000))],
  cookie_time: (_s, sec) => [cookieDate(new Date(Number(sec) * 1000))],
  parse_http_time: (_s, str) => {
    const t = Date.parse(String(str))
    return [Number.isNaN(t) ? undefined : Math.floor(t / 1000)]
  },
  localtime: (s) => {
    const d = new Date(clockOf(s).now())
    return [
      `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`,
    ]
  },
  utctime: (s) => [new Date(clockOf(s).now()).toISOString().replace('T', ' ').slice(0, 19)],
  status_get: (s) => [need(s).response.status],
  status_set: (s, v) => {
    need(s).response.status = Number(v)
    record(s, 'ngx.status', [v])
    return []
  },
  upstream: (s) => {
    const ctx = need(s)
    return [ctx.upstream.method, ctx.upstream.body, ctx.upstream.query, ctx.request.httpVersion]
  },
  req_headers: (s, max, raw) => {
    // nginx's headers_in: what plugins set or cleared, the client's Host (a Host write sets $upstream_host)
    const { headers } = currentHeaders(need(s)).table(Number(max ?? 100) || Infinity, keyOf(raw))
    return [headers]
  },
  resp_header_get: (s, name) => {
    const all = need(s).response.headers.all(String(name))
    return [all.length === 0 ? undefined : all.length === 1 ? all[0] : all]
  },
  resp_header_set: (s, name, value) => {
    const h = need(s).response.headers
    if (value === undefined || value === null || (Array.isArray(value) && value.length === 0)) h.clear(String(name))
    else h.set(String(name), Array.isArray(value) ? value.map(String) : String(value))
    record(s, `ngx.header.${String(name)}`, [value])
    return []
  },
  resp_header_add: (s, name, value) => {
    // ngx.resp.add_header: one more value, the ones there kept (a table adds each of its values)
    const values = Array.isArray(value) ? value.map(String) : [String(value)]
    if (values.length > 0) need(s).response.headers.add(String(name), values)
    record(s, 'ngx.resp.add_header', [name, value])
    return []
  },
  resp_headers: (s, max, raw) => [need(s).response.headers.table(Number(max ?? 100) || Infinity, keyOf(raw)).headers],
  decode_args: (_s, q, max, limit) => decodeLuaArgs(q, max, limit === 'args' ? 'args' : 'parts'),
  encode_args: (_s, t) => [encodeArgs(t)],
  ip_parse: (_s, ip) => {
    const text = String(ip)
    if (!ipaddr.isValid(text)) return [undefined]
    const a = ipaddr.parse(text)
    return [a.kind(), Buffer.from(a.toByteArray())]
  },
  ip_match: (_s, ip, cidrs) => {
    const text = String(ip)
    if (!ipaddr.isValid(text)) return [false]
    let addr = ipaddr.parse(text)
    if (addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress())
      addr = (addr as ipaddr.IPv6).toIPv4Address()
    for (const c of (cidrs as string[]) ?? []) {
      const [range, bits] = c.includes('/') ? ipaddr.parseCIDR(c) : [ipaddr.parse(c), c.includes(':') ? 128 : 32]
      if (range.kind() === addr.kind() && addr.match(range, bits)) return [c]
    }
    return [false]
  },
  ip_valid_cidr: (_s, c) => {
    const t = String(c)
    return [
      ipaddr.isValid(t) ||
        (t.includes('/') &&
          (() => {
            try {
              ipaddr.parseCIDR(t)
              return true
            } catch {
              return false
            }
          })()),
    ]
  },
}
