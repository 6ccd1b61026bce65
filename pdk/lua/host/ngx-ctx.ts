/**
 * The fields Kong's runloop puts in a request's `ngx.ctx` (kong/runloop/handler.lua, kong/init.lua), read
 * from the kit's request state: `service`, `route`, `balancer_data`, `authenticated_consumer` /
 * `authenticated_credential` (the kit's kong.client state, so a direct write is what kong.client reads),
 * `plugin_id`, `KONG_PHASE` and the `KONG_*` timings. A replay keeps no clock per phase: a phase that has
 * begun started at the request's start and one that has ended took 0 ms.
 */
import type { Context, Table } from '../../kit/context.js'
import { LIFECYCLE, type Phase } from '../../kit/private/phases.js'
import { setUpstreamTarget } from '../../kit/private/upstream.js'
import type { HostOp, HostState } from './types.js'

/** Kong's `private/phases.lua` bits, as `ngx.ctx.KONG_PHASE` holds them. */
const PHASE_BITS: Record<string, number> = {
  init_worker: 0x1,
  certificate: 0x2,
  rewrite: 0x10,
  access: 0x20,
  balancer: 0x40,
  response: 0x80,
  header_filter: 0x200,
  body_filter: 0x400,
  log: 0x2000,
  preread: 0x4000,
  admin_api: 0x10000000,
}

/** The phase names Kong's timings use (`KONG_<NAME>_START`, `_ENDED_AT`, `_TIME`). */
const TIMED: Partial<Record<Phase, string>> = {
  rewrite: 'REWRITE',
  access: 'ACCESS',
  balancer: 'BALANCER',
  response: 'RESPONSE',
  header_filter: 'HEADER_FILTER',
  body_filter: 'BODY_FILTER',
  log: 'LOG',
}

/** The fields `ngx.ctx` answers through the host (the Lua side keeps everything else as a plain table). */
export const NGX_CTX_FIELDS = [
  'service',
  'route',
  'balancer_data',
  'authenticated_consumer',
  'authenticated_credential',
  'plugin_id',
  'KONG_PHASE',
  'KONG_PROCESSING_START',
  'KONG_PROXIED',
  'KONG_PROXY_LATENCY',
  'KONG_WAITING_TIME',
  'KONG_RECEIVE_TIME',
  'KONG_RESPONSE_LATENCY',
  ...Object.values(TIMED).flatMap((n) => [`KONG_${n}_START`, `KONG_${n}_ENDED_AT`, `KONG_${n}_TIME`]),
]

const need = (s: HostState): Context => {
  if (!s.ctx) throw new Error('API disabled in the current context')
  return s.ctx
}

const address = (host: string): string | undefined =>
  host === 'localhost' ? '127.0.0.1' : /^[\d.]+$|:/.test(host) ? host : undefined

/** Kong's balancer_data for the request's service: where it connects, with the service's retries and timeouts. */
function balancerData(ctx: Context): Table {
  const svc = ctx.data.service ?? {}
  const host = ctx.upstream.host
  return {
    scheme: ctx.upstream.scheme,
    type: /^\d+\.\d+\.\d+\.\d+$/.test(host) ? 'ipv4' : host.includes(':') ? 'ipv6' : 'name',
    host,
    port: ctx.upstream.port,
    try_count: ctx.response.service ? 1 : 0,
    // the name Kong's balancer resolved (the host itself for an address) and the address it connected to, once
    // it ran (zipkin's peer.hostname and its proxy span's remote address read them)
    // (a name other than localhost is resolved by no DNS here: no ip)
    ...(ctx.response.service ? { hostname: host, ...(address(host) ? { ip: address(host) } : {}) } : {}),
    // one try, to the target, once the service has answered (Kong lists each try of its balancer)
    tries: ctx.response.service
      ? [{ ip: host, port: ctx.upstream.port, balancer_start: ctx.startTime, balancer_latency: 0 }]
      : [],
    retries: (svc.retries as number | undefined) ?? 5,
    connect_timeout: (svc.connect_timeout as number | undefined) ?? 60000,
    send_timeout: (svc.write_timeout as number | undefined) ?? 60000,
    read_timeout: (svc.read_timeout as number | undefined) ?? 60000,
  }
}

function timing(ctx: Context, name: string): number | boolean | undefined {
  const start = ctx.startTime
  if (name === 'KONG_PROCESSING_START') return start
  const proxied = ctx.response.service !== undefined
  if (name === 'KONG_PROXIED') return proxied || ctx.response.kongProxied || undefined
  if (name === 'KONG_PROXY_LATENCY' || name === 'KONG_WAITING_TIME' || name === 'KONG_RECEIVE_TIME')
    return proxied ? 0 : undefined
  if (name === 'KONG_RESPONSE_LATENCY') return ctx.response.exited ? 0 : undefined
  const m = /^KONG_([A-Z_]+?)_(START|ENDED_AT|TIME)$/.exec(name)
  const phase = m && (Object.keys(TIMED) as Phase[]).find((p) => TIMED[p] === m[1])
  if (!phase) return undefined
  const order = LIFECYCLE[ctx.subsystem]
  const at = order.indexOf(ctx.phase)
  const of = order.indexOf(phase)
  if (of === -1 || at === -1 || of > at) return undefined
  if (m[2] === 'START') return start
  return of < at ? (m[2] === 'TIME' ? 0 : start) : undefined
}

/** A write a plugin made through ngx.ctx, in the trace beside the kit calls. */
const record = (s: HostState, call: string, value: unknown): void =>
  s.bridge.record?.({ call, args: [value], returns: [] })

export const NGX_CTX_OPS: Record<string, HostOp> = {
  ngx_ctx_fields: () => [NGX_CTX_FIELDS],
  ngx_ctx_get: (s, name) => {
    const ctx = need(s)
    switch (name) {
      case 'service':
        return [ctx.data.service]
      case 'route':
        return [ctx.data.route]
      case 'balancer_data':
        // Kong makes it once a route matched (its access phase's end)
        return [ctx.data.unrouted ? undefined : balancerData(ctx)]
      case 'authenticated_consumer':
        return [ctx.auth.consumer]
      case 'authenticated_credential':
        return [ctx.auth.credential]
      case 'plugin_id':
        return [ctx.plugin?.id]
      case 'KONG_PHASE':
        return [PHASE_BITS[ctx.phase]]
    }
    return [timing(ctx, String(name))]
  },
  ngx_ctx_set: (s, name, value) => {
    const ctx = need(s)
    const v = value === null ? undefined : value
    if (name === 'authenticated_consumer') ctx.auth.consumer = v as Table | undefined
    else if (name === 'authenticated_credential') ctx.auth.credential = v as Table | undefined
    else if (name === 'KONG_PROXIED') ctx.response.kongProxied = v !== undefined && v !== false
    record(s, `ngx.ctx.${String(name)}`, value)
    return []
  },
  // balancer_data.host / .port: where the service is reached, as kong.service.set_target sets them
  balancer_set: (s, name, value) => {
    const ctx = need(s)
    if (name === 'host' && typeof value === 'string') setUpstreamTarget(ctx, { host: value })
    else if (name === 'port' && typeof value === 'number') setUpstreamTarget(ctx, { port: value })
    record(s, `ngx.ctx.balancer_data.${String(name)}`, value)
    return []
  },
}
