/** The serialized log record (log.serialize) and the values plugins add to it. */
import type { Context, Table } from '../context.js'
import { checkPhase, KONG, phaseRule, phaseSet, SETS } from '../private/phases.js'
import { decodeArgs } from '../private/args.js'
import { upstreamUri } from '../private/upstream.js'

const LOG_ONLY = phaseRule(phaseSet('log'))
// Kong's phases_with_ctx (no certificate); the reference lists B
const WITH_CTX = phaseRule(KONG.with_ctx, SETS.B)

/** Records a set / add / replace of a (dotted) key; applied when the record is serialized. */
export function setSerializeValue(ctx: Context, key: unknown, value: unknown, options?: { mode?: string }): void {
  checkPhase(ctx, WITH_CTX)
  if (typeof key !== 'string') throw new Error('key must be a string')
  const mode = options?.mode ?? 'set'
  if (mode !== 'set' && mode !== 'add' && mode !== 'replace') throw new Error("mode must be 'set', 'add' or 'replace'")
  ctx.serializeValues.push({ key, value, mode })
}

function isValidValue(v: unknown, seen = new Set<unknown>()): boolean {
  if (v === undefined || v === null || typeof v === 'number' || typeof v === 'string' || typeof v === 'boolean')
    return true
  if (typeof v !== 'object' || seen.has(v)) return false
  seen.add(v)
  return Object.values(v as object).every((x) => isValidValue(x, seen))
}

/** Splits `a.b\.c` into ['a', 'b.c']. */
function splitKey(key: string): string[] {
  const parts: string[] = []
  let start = 0
  for (let i = 1; i < key.length; i++) {
    if (key[i] === '.' && key[i - 1] !== '\\') {
      parts.push(key.slice(start, i))
      start = i + 1
    }
  }
  parts.push(key.slice(start))
  return parts.map((p) => p.replace(/\\\./g, '.'))
}

function edit(root: Table, items: Context['serializeValues']): Table {
  for (const { key, value, mode } of items) {
    if (!isValidValue(value)) {
      throw new Error(
        'value must be nil, a number, string, boolean or a non-self-referencial table containing numbers, string and booleans',
      )
    }
    const parts = splitKey(key)
    let node: Table | undefined = root
    for (const sub of parts.slice(0, -1)) {
      const next: unknown = node[sub]
      if (next === undefined || next === null) {
        if (mode === 'replace') {
          node = undefined
          break
        }
        node[sub] = {}
      } else if (typeof next !== 'object') {
        throw new Error(
          `The key '${key}' could not be used as a serialize value. Subkey '${sub}' is not a table. It's ${String(next)}`,
        )
      }
      node = node[sub] as Table
    }
    if (!node) continue
    const last = parts[parts.length - 1]!
    const exists = node[last] !== undefined && node[last] !== null
    if (mode === 'set' || (mode === 'add' && !exists) || (mode === 'replace' && exists)) {
      if (value === undefined || value === null) delete node[last]
      else node[last] = structuredClone(value)
    }
  }
  return root
}

const copy = <T>(v: T): T => (v === undefined ? v : structuredClone(v))

function authenticatedEntity(ctx: Context): Table | undefined {
  const cred = ctx.auth.credential
  if (!cred) return undefined
  return { id: cred.id, consumer_id: cred.consumer_id ?? ctx.auth.consumer?.id }
}

function tlsInfo(ctx: Context): Table | undefined {
  if (ctx.request.scheme !== 'https' && ctx.request.scheme !== 'tls') return undefined
  return {
    version: 'TLSv1.3',
    cipher: 'TLS_AES_256_GCM_SHA384',
    client_verify: ctx.tls.verifyOverride ?? (ctx.request.tlsChain ? 'SUCCESS' : 'NONE'),
  }
}

/** log.serialize: the record logging plugins send, with the plugin-set values applied. */
export function serialize(ctx: Context): Table {
  checkPhase(ctx, LOG_ONLY)
  const req = ctx.request
  const res = ctx.response
  const common = {
    latencies: { kong: 0, proxy: res.proxied ? 0 : -1, request: ctx.clock.now() - ctx.startTime, receive: 0 },
    // Kong sets up the balancer (its tries an empty array) for a request routed to a service before the
    // access phase runs, so a request a plugin ends there logs `"tries":[]`
    tries: res.proxied ? [{ ip: ctx.upstream.host, port: ctx.upstream.port }] : ctx.data.service ? [] : undefined,
    authenticated_entity: authenticatedEntity(ctx),
    route: copy(ctx.data.route),
    service: copy(ctx.data.service),
    consumer: copy(ctx.auth.consumer),
    client_ip: ctx.forwarded.ip,
    started_at: ctx.startTime,
    // Kong's open-source edition has one workspace (kong.workspaces.get_workspace_name); prometheus labels by it
    workspace_name: 'default',
  }
  let root: Table
  if (ctx.subsystem === 'stream') {
    root = {
      session: {
        tls: tlsInfo(ctx),
        received: req.body.length,
        sent: res.body?.length ?? 0,
        status: res.status,
        server_port: req.port,
      },
      upstream: { received: res.service?.body.length ?? 0, sent: ctx.upstream.body.length },
      ...common,
      // an L4 session has no request/proxy/receive split: Kong reports the session time
      latencies: { kong: 0, session: ctx.clock.now() - ctx.startTime },
    }
  } else {
    const headers = req.headers.table(ctx.config.lua_max_req_headers).headers
    if (headers.authorization !== undefined) headers.authorization = 'REDACTED'
    if (headers['proxy-authorization'] !== undefined) headers['proxy-authorization'] = 'REDACTED'
    const q = req.uri.indexOf('?')
    const query = q === -1 ? '' : req.uri.slice(q + 1)
    root = {
      request: {
        id: ctx.requestId,
        uri: req.uri,
        // Kong's host_port: the listening port mapped by port_maps
        url: `${req.scheme}://${req.host}:${ctx.config.port_maps[req.port] ?? req.port}${req.uri}`,
        querystring: decodeArgs(query, ctx.config.lua_max_uri_args).args,
        method: req.method,
        headers,
        size: req.body.length,
        tls: tlsInfo(ctx),
      },
      upstream_uri: upstreamUri(ctx),
      // buffered proxying reaches the service in a subrequest: $upstream_status is empty and Kong falls back on
      // ctx.buffered_status, a number
      upstream_status: res.service ? (ctx.upstream.buffered ? res.service.status : String(res.service.status)) : '',
      response: {
        status: res.status,
        headers: res.headers.table(ctx.config.lua_max_resp_headers).headers,
        size: res.body?.length ?? 0,
      },
      ...common,
      source: res.unexpected ? 'kong' : res.exited ? 'kong' : res.proxied ? 'upstream' : 'kong',
    }
  }
  root = JSON.parse(JSON.stringify(root)) as Table
  return edit(root, ctx.serializeValues)
}
