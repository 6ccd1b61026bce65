/**
 * The request Kong proxies is nginx's state ($upstream_host, $upstream_uri, $args, the balancer's target), and
 * these are its only writers and readers: kong.service.* (after its checks) and the Lua face's ngx.var and
 * ngx.ctx.balancer_data (lua/host) call the same ones, so a change reads the same whichever face made it.
 */
import type { Context } from '../context.js'

/** $upstream_host, which nginx sends as the one Host header; undefined clears it (the service's host is sent). */
export function setUpstreamHost(ctx: Context, host: string | undefined): void {
  if (host === undefined) ctx.upstream.headers.clear('Host')
  else ctx.upstream.headers.set('Host', host)
}

/** $upstream_host as nginx reads it: the Host the service gets. */
export const upstreamHost = (ctx: Context): string => ctx.upstream.headers.get('host') ?? ctx.upstream.host

/** The path the service gets, as it is written (kong.service.request.set_path escapes it first). */
export function setUpstreamPath(ctx: Context, path: string): void {
  ctx.upstream.path = path
}

/** $args: the query the service gets, without its `?`. */
export function setUpstreamQuery(ctx: Context, query: string): void {
  ctx.upstream.query = query
}

/** $upstream_uri: its path, and its query when it has a `?`. */
export function setUpstreamUri(ctx: Context, uri: string): void {
  const q = uri.indexOf('?')
  setUpstreamPath(ctx, q === -1 ? uri : uri.slice(0, q))
  if (q !== -1) setUpstreamQuery(ctx, uri.slice(q + 1))
}

/** $upstream_uri as nginx reads it: the path, and `?query` when there is one; empty when nothing was routed. */
export const upstreamUri = (ctx: Context): string =>
  ctx.upstream.path === '' ? '' : ctx.upstream.path + (ctx.upstream.query ? `?${ctx.upstream.query}` : '')

/** $upstream_scheme: how the service is reached (kong.service.request.set_scheme checks it first). */
export function setUpstreamScheme(ctx: Context, scheme: string): void {
  ctx.upstream.scheme = scheme
}

/** Where the balancer sends the request (kong.service.set_target, set_upstream; balancer_data.host / port). */
export function setUpstreamTarget(ctx: Context, target: { host?: string; port?: number }): void {
  if (target.host !== undefined) ctx.upstream.host = target.host
  if (target.port !== undefined) ctx.upstream.port = target.port
}
