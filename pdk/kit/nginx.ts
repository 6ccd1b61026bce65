/** pdk.webserver (Kong's kong.nginx): subsystem, statistics, variables and per-request context. */
import type { Context } from './context.js'
import { protocolName } from './log/line.js'
import { upstreamHost, upstreamUri } from './private/upstream.js'

/** Builds pdk.webserver for a request context. */
export function createWebserver(ctx: Context) {
  const variables = (): Record<string, string | undefined> => {
    const req = ctx.request
    const q = req.uri.indexOf('?')
    return {
      request_method: req.method,
      request_uri: req.uri,
      uri: q === -1 ? req.uri : req.uri.slice(0, q),
      args: q === -1 ? undefined : req.uri.slice(q + 1),
      scheme: req.scheme,
      host: req.host,
      server_port: String(req.port),
      remote_addr: ctx.forwarded.ip,
      remote_port: ctx.forwarded.port === undefined ? '' : String(ctx.forwarded.port),
      realip_remote_addr: req.peer.ip,
      realip_remote_port: String(req.peer.port),
      request_length: String(req.body.length),
      server_protocol: req.httpVersion === undefined ? undefined : protocolName(req.httpVersion),
      request_id: ctx.requestId,
      upstream_uri: upstreamUri(ctx),
      upstream_host: upstreamHost(ctx),
      upstream_scheme: ctx.upstream.scheme,
      ssl_protocol: req.scheme === 'https' || req.scheme === 'tls' ? 'TLSv1.3' : undefined,
    }
  }
  return {
    get_subsystem(): string {
      return ctx.subsystem
    },
    get_statistics(): Record<string, number> {
      return { ...ctx.data.node.statistics }
    },
    get_tls1_version_str(): string | undefined {
      return ctx.request.scheme === 'https' || ctx.request.scheme === 'tls' ? 'TLSv1.3' : undefined
    },
    get_var(name: string): string | undefined {
      if (typeof name !== 'string') throw new Error('variable name must be a string')
      if (name.startsWith('http_')) {
        // nginx (1.23+) joins a repeated header with ", " (cookies with "; ")
        const all = ctx.request.headers.all(name.slice(5))
        return all.length === 0 ? undefined : all.join(name === 'http_cookie' ? '; ' : ', ')
      }
      if (name.startsWith('arg_')) {
        // $arg_<name>: the first `name=` argument (case-insensitive), not decoded; nginx needs the `=`
        const q = ctx.request.uri.indexOf('?')
        const want = name.slice(4).toLowerCase()
        for (const part of q === -1 ? [] : ctx.request.uri.slice(q + 1).split('&')) {
          const eq = part.indexOf('=')
          if (eq !== -1 && part.slice(0, eq).toLowerCase() === want) return part.slice(eq + 1)
        }
        return undefined
      }
      return variables()[name]
    },
    get_ctx(k: string): unknown {
      if (typeof k !== 'string') throw new Error('key must be a string')
      return ctx.webCtx.get(k)
    },
    set_ctx(k: string, v: unknown): void {
      if (typeof k !== 'string') throw new Error('key must be a string')
      ctx.webCtx.set(k, v)
    },
    req_start_time(): number {
      return ctx.startTime / 1000
    },
  }
}
