/** pdk.request: the request as the client sent it (its headers as plugins left them). Phases: A unless stated. */
import type { Context } from '../context.js'
import { checkLimit, decodeArgs, type ArgsTable } from '../private/args.js'
import type { HeaderList, HeadersTable } from '../private/headers.js'
import { trustMatcher } from '../ip.js'
import { checkPhase, KONG, phaseRule, phaseSet, SETS } from '../private/phases.js'
import { split, values, type Values } from '../private/values.js'
import { decodeBody, rawBody } from './body.js'
import { normalizePath } from './path.js'

// Kong's `PHASES.request` (balancer too), the reference's set A under --strict
const A = phaseRule(KONG.request, SETS.A)
const PORT_PHASES = phaseRule({ except: phaseSet('init_worker') }, phaseSet(...SETS.A, 'certificate'))
const BODY_PHASES = phaseRule(KONG.before_content, SETS.D)

/**
 * The request's headers as nginx holds them when a plugin reads them: the client's, with what plugins set or
 * cleared since (Kong's `kong.service.request.set_header` and `ngx.req.set_header` change nginx's request
 * headers, which `kong.request.get_header` reads); `Host` stays the client's, as a Host write only sets
 * `$upstream_host`.
 */
export function currentHeaders(ctx: Context): HeaderList {
  const headers = ctx.upstream.headers.clone()
  const host = ctx.request.headers.all('host')
  if (host.length) headers.set('Host', host)
  else headers.clear('Host')
  return headers
}

/** Builds pdk.request for a request context. */
export function createRequest(ctx: Context) {
  const req = ctx.request
  const trusted = () => trustMatcher(ctx.config.trusted_ips)(req.peer.ip)
  const hostOf = (value: string) => {
    const at = value.indexOf('@')
    if (at !== -1) value = value.slice(at + 1)
    return value
  }
  const validPort = (n: number) => Number.isInteger(n) && n >= 1 && n <= 65535

  const api = {
    get_scheme(): string {
      checkPhase(ctx, A)
      return req.scheme
    },
    get_host(): string {
      checkPhase(ctx, A)
      return req.host
    },
    get_port(): number {
      checkPhase(ctx, PORT_PHASES)
      return req.port
    },
    get_forwarded_scheme(): string {
      checkPhase(ctx, A)
      const proto = trusted() ? req.headers.get('x-forwarded-proto') : undefined
      return proto !== undefined ? proto.toLowerCase() : req.scheme
    },
    get_forwarded_host(): string {
      checkPhase(ctx, A)
      const host = trusted() ? req.headers.get('x-forwarded-host') : undefined
      if (host === undefined) return req.host
      return hostOf(host).split(':')[0]!.toLowerCase()
    },
    get_forwarded_port(): number {
      checkPhase(ctx, A)
      if (trusted()) {
        const port = Number(req.headers.get('x-forwarded-port'))
        if (validPort(port)) return port
        const host = req.headers.get('x-forwarded-host')
        if (host !== undefined) {
          const h = hostOf(host)
          const colon = h.indexOf(':')
          const p = colon === -1 ? NaN : Number(h.slice(colon + 1))
          if (validPort(p)) return p
        }
      }
      return ctx.config.port_maps[req.port] ?? req.port
    },
    get_forwarded_path(): string {
      checkPhase(ctx, A)
      const path = trusted() ? req.headers.get('x-forwarded-path') : undefined
      return path ?? api.get_path()
    },
    get_forwarded_prefix(): string | undefined {
      checkPhase(ctx, A)
      const prefix = trusted() ? req.headers.get('x-forwarded-prefix') : undefined
      if (prefix !== undefined) return prefix
      // the router strips the prefix before the access phase; earlier there is nothing yet
      return ctx.phase === 'rewrite' ? undefined : ctx.data.strippedPrefix
    },
    get_http_version(): number | undefined {
      checkPhase(ctx, A)
      return req.httpVersion
    },
    get_method(): string {
      checkPhase(ctx, A)
      // nginx's method, which service.request.set_method changes; after an unexpected error Kong reads the
      // request line (HTTP/1)
      if (ctx.response.unexpected && (req.httpVersion ?? 1) < 2) return req.method.toUpperCase()
      return ctx.upstream.method.toUpperCase()
    },
    get_path(): string {
      return normalizePath(api.get_raw_path())
    },
    get_raw_path(): string {
      checkPhase(ctx, A)
      const q = req.uri.indexOf('?', 1)
      return q === -1 ? req.uri : req.uri.slice(0, q)
    },
    get_path_with_query(): string {
      checkPhase(ctx, A)
      return req.uri
    },
    get_raw_query(): string {
      checkPhase(ctx, A)
      // Kong reads nginx's $args, which kong.service.request.set_raw_query / set_query /
      // clear_query_arg (and a Lua plugin's ngx.var.args) write: a later call sees the new query
      return ctx.upstream.query
    },
    get_query_arg(name: string): string | true | undefined {
      checkPhase(ctx, A)
      if (typeof name !== 'string') throw new Error('query argument name must be a string')
      const value = (split(api.get_query()).value as ArgsTable)[name]
      return Array.isArray(value) ? value[0] : value
    },
    get_query(max_args?: number): ArgsTable | Values {
      checkPhase(ctx, A)
      checkLimit('max_args', max_args)
      // Kong returns ngx.req.get_uri_args' two values: the table and "truncated" when max left some out
      const { args, truncated } = decodeArgs(api.get_raw_query(), max_args ?? ctx.config.lua_max_uri_args)
      return truncated ? values(args, 'truncated') : args
    },
    get_header(name: string): string | undefined {
      checkPhase(ctx, A)
      if (typeof name !== 'string') throw new Error('header name must be a string')
      if (name.toLowerCase() === 'host') return req.headers.get(name)
      return ctx.upstream.headers.get(name)
    },
    get_headers(max_headers?: number): HeadersTable | Values {
      checkPhase(ctx, A)
      checkLimit('max_headers', max_headers)
      const { headers, truncated } = currentHeaders(ctx).table(max_headers ?? ctx.config.lua_max_req_headers)
      return truncated ? values(headers, 'truncated') : headers
    },
    get_raw_body(max_allowed_file_size?: number): string | Buffer | Values {
      checkPhase(ctx, BODY_PHASES)
      return rawBody(ctx, max_allowed_file_size)
    },
    get_body(mimetype?: string, max_args?: number, max_allowed_file_size?: number): Promise<Values> {
      checkPhase(ctx, BODY_PHASES)
      return decodeBody(ctx, mimetype ?? undefined, max_args ?? undefined, max_allowed_file_size ?? undefined)
    },
    get_start_time(): number {
      checkPhase(ctx, A)
      return ctx.startTime
    },
    get_uri_captures(): { unnamed: string[]; named: Record<string, string> } {
      checkPhase(ctx, A)
      return { unnamed: [...ctx.data.captures.unnamed], named: { ...ctx.data.captures.named } }
    },
  }
  return api
}
