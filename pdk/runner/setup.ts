/** Builds the request context of a scenario from its fixture. */
import { createHash } from 'node:crypto'
import { hostname } from 'node:os'
import { DEFAULT_CONFIG, type Context, type PdkConfig, type Table } from '../context.js'
import type { Fixture } from '../fixture.js'
import { HeaderList } from '../headers.js'
import { realClient, trustMatcher } from '../ip.js'

const DEFAULT_PORTS: Record<string, number> = { http: 80, https: 443, tcp: 80, tls: 443 }

/** A stable v4-shaped UUID derived from text, so fixtures can name IDs they did not set. */
const uuids = new Map<string, string>()
export function stableUuid(text: string): string {
  const hit = uuids.get(text)
  if (hit) return hit
  const h = createHash('sha1').update(text).digest('hex')
  const uuid = `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${((parseInt(h[16]!, 16) & 3) | 8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`
  uuids.set(text, uuid)
  return uuid
}

const HOSTNAME = hostname()

/** nginx sizes: "8k" → 8192. */
const size = (v: unknown): number => {
  if (typeof v === 'number') return v
  const m = /^(\d+)([kKmM]?)$/.exec(String(v))
  if (!m) return DEFAULT_CONFIG.client_body_buffer_size
  return Number(m[1]) * (m[2] === '' ? 1 : /k/i.test(m[2]!) ? 1024 : 1024 * 1024)
}

function portMaps(v: unknown): Record<number, number> {
  if (Array.isArray(v)) {
    const out: Record<number, number> = {}
    for (const entry of v as string[]) {
      const [external, listening] = entry.split(':').map(Number)
      out[listening!] = external!
    }
    return out
  }
  return Object.fromEntries(Object.entries((v ?? {}) as Record<string, number>).map(([k, n]) => [Number(k), n]))
}

function buildConfig(input: Record<string, unknown> | undefined): PdkConfig {
  const c = { ...DEFAULT_CONFIG, ...(input ?? {}) } as PdkConfig & Record<string, unknown>
  return Object.freeze({
    ...c,
    trusted_ips: Object.freeze([...(c.trusted_ips ?? [])]) as string[],
    client_body_buffer_size: size(c.client_body_buffer_size),
    port_maps: portMaps(input?.port_maps),
  })
}

/** Route matching the emulator needs: regex captures and the prefix strip_path removes. */
function routeMatch(
  route: Table | undefined,
  path: string,
): { unnamed: string[]; named: Record<string, string>; prefix?: string } {
  const none = { unnamed: [] as string[], named: {} as Record<string, string> }
  const paths = (route?.paths as string[] | undefined) ?? []
  for (const p of paths) {
    if (p.startsWith('~')) {
      const m = new RegExp('^' + p.slice(1)).exec(path)
      if (!m) continue
      return {
        // Kong's unnamed captures are positions 1..n (the whole match is not one of them)
        unnamed: m.slice(1).map((s) => s ?? ''),
        named: { ...(m.groups ?? {}) } as Record<string, string>,
        prefix: route?.strip_path !== false ? m[0] : undefined,
      }
    }
    if (path.startsWith(p)) return { ...none, prefix: route?.strip_path !== false && p !== '/' ? p : undefined }
  }
  return none
}

/** nginx's $host from a Host header: lowercase, without the port; undefined when there is none. */
function hostOf(header: string | undefined): string | undefined {
  if (header === undefined || header.trim() === '') return undefined
  const m = /^\s*(\[[^\]]*\]|[^:\s]+)/.exec(header)
  return m ? m[1]!.replace(/^\[|\]$/g, '').toLowerCase() : undefined
}

// a fixture's config and trust matcher are frozen and the same for every replay: built once (the
// bench measured them at a quarter of building a context)
const configs = new WeakMap<Fixture, { config: PdkConfig; trusted: ReturnType<typeof trustMatcher> }>()

/** The context a scenario starts with. */
export function buildContext(f: Fixture, defaults: { requestId?: string } = {}): Context {
  let built = configs.get(f)
  if (!built) {
    const c = buildConfig(f.config)
    configs.set(f, (built = { config: c, trusted: trustMatcher(c.trusted_ips) }))
  }
  const config = built.config
  const subsystem = f.subsystem ?? 'http'
  const m = /^([a-z]+):\/\/([^/?#]*)([^#]*)/i.exec(f.request.url)!
  const scheme = m[1]!.toLowerCase()
  const authority = m[2]!.replace(/^.*@/, '')
  const hostMatch = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(authority)
  const urlHost = (hostMatch?.[1] ?? authority).toLowerCase()
  const port = hostMatch?.[2]
    ? Number(hostMatch[2])
    : ((Object.hasOwn(DEFAULT_PORTS, scheme) ? DEFAULT_PORTS[scheme] : undefined) ?? 80)
  const uri = m[3] || '/'

  const headers = HeaderList.from(f.request.headers)
  if (!headers.has('host') && subsystem === 'http') {
    headers.set('Host', hostMatch?.[2] ? `${urlHost}:${port}` : urlHost)
  }
  let body = Buffer.alloc(0)
  if (f.request.body !== undefined && f.request.body !== null) {
    if (typeof f.request.body === 'string') body = Buffer.from(f.request.body)
    else {
      body = Buffer.from(JSON.stringify(f.request.body))
      if (!headers.has('content-type')) headers.set('Content-Type', 'application/json')
    }
    if (!headers.has('content-length') && subsystem === 'http') headers.set('Content-Length', String(body.length))
  }
  const peer = { ip: f.request.client?.ip ?? '127.0.0.1', port: f.request.client?.port ?? 54321 }
  const trusted = built.trusted
  const realHeader = headers.all(config.real_ip_header).join(', ') || undefined
  const forwarded = realClient(peer, realHeader, config.real_ip_header, config.real_ip_recursive, trusted)

  const q = uri.indexOf('?')
  const rawPath = q === -1 ? uri : uri.slice(0, q)
  const match = routeMatch(f.route, rawPath)
  const service = f.service
  const rest = match.prefix ? rawPath.slice(match.prefix.length) : rawPath
  const base = typeof service?.path === 'string' ? service.path : ''
  // Kong joins service.path and what is left of the path; a fully stripped path leaves service.path
  const joined = rest === '' ? base : base.endsWith('/') && rest.startsWith('/') ? base + rest.slice(1) : base + rest
  const upstreamPath = joined || '/'

  const groupMembers: Record<string, string[]> = {}
  for (const g of f.consumer_groups ?? []) {
    for (const c of g.consumers ?? []) (groupMembers[c] ??= []).push(g.id)
  }
  const node = f.node ?? {}
  return {
    phase: 'rewrite',
    subsystem,
    config,
    data: {
      node: {
        id: (node.id as string | undefined) ?? stableUuid(`node:${f.name}`),
        hostname: (node.hostname as string | undefined) ?? HOSTNAME,
        memory: (node.memory as Context['data']['node']['memory'] | undefined) ?? {
          lua_shared_dicts: {
            kong: { capacity: 5242880, allocated_slabs: 12288 },
            kong_db_cache: { capacity: 134217728, allocated_slabs: 1056768 },
          },
          workers_lua_vms: [{ pid: process.pid, http_allocated_gc: 1102 * 1024 }],
        },
        statistics: {
          connections_active: 1,
          connections_reading: 0,
          connections_writing: 1,
          connections_waiting: 0,
          connections_accepted: 1,
          connections_handled: 1,
          total_requests: 1,
          ...((node.statistics as Record<string, number> | undefined) ?? {}),
        },
      },
      clusterId: f.cluster?.id,
      route: f.route ? structuredClone(f.route) : undefined,
      service: service ? structuredClone(service) : undefined,
      // the db section's consumers are the same entities kong.client.load_consumer finds
      consumers: [...(f.consumers ?? []), ...(f.db?.consumers ?? [])],
      upstreams: f.upstreams ?? [],
      credentials: f.credentials ?? [],
      consumerGroups: (f.consumer_groups ?? []).map(({ consumers: _members, ...g }) => g),
      groupMembers,
      vaults: f.vault ?? {},
      captures: { unnamed: match.unnamed, named: match.named },
      strippedPrefix: match.prefix,
      outbound: f.outbound,
    },
    request: {
      method: (f.request.method ?? 'GET').toUpperCase(),
      scheme,
      host: hostOf(headers.get('host')) ?? urlHost.replace(/^\[|\]$/g, ''),
      port,
      uri,
      headers,
      body,
      httpVersion: f.request.http_version === null ? undefined : (f.request.http_version ?? 1.1),
      peer,
      tlsChain: typeof f.request.tls === 'string' ? f.request.tls : f.request.tls?.client_certificate_chain,
    },
    forwarded,
    upstream: {
      method: (f.request.method ?? 'GET').toUpperCase(),
      scheme: (service?.protocol as string | undefined) ?? 'http',
      host: (service?.host as string | undefined) ?? 'upstream.test',
      port: (service?.port as number | undefined) ?? 80,
      path: upstreamPath,
      query: q === -1 ? '' : uri.slice(q + 1),
      headers: headers.clone(),
      body,
      buffered: false,
    },
    response: {
      status: 200,
      headers: new HeaderList(),
      body: undefined,
      exited: false,
      unexpected: false,
      proxied: false,
    },
    auth: {},
    tls: { certificateRequested: false, caHints: false, sessionReuseDisabled: false },
    serializeValues: [],
    shared: new Map(),
    webCtx: new Map(),
    logs: [],
    telemetry: [],
    outbound: [],
    startTime: Date.now(),
    requestId: f.request.id ?? defaults.requestId ?? stableUuid(`request:${f.name}`).replace(/-/g, ''),
    phaseEnded: false,
  }
}
