/** The state of one emulated request: what the kit reads and changes while the phases run. */
import type { OutboundEntry } from '../fixture/fixture-types.generated.js'
import { HeaderList, type HeadersTable } from './private/headers.js'
import type { Clock } from './private/clock.js'
import type { Phase } from './private/phases.js'

/** Gateway configuration the kit consults (Kong's kong.conf names). */
export interface PdkConfig {
  trusted_ips: string[]
  real_ip_header: string
  real_ip_recursive: boolean
  lua_max_req_headers: number
  lua_max_resp_headers: number
  lua_max_uri_args: number
  lua_max_post_args: number
  /** Bytes; a fixture may write nginx sizes such as "8k". */
  client_body_buffer_size: number
  /** Listening port → port the client sees. */
  port_maps: Record<number, number>
  lua_transform_underscores_in_response_headers: boolean
  /** Whether the OpenTelemetry plugin is configured to report logs (telemetry.log needs it). */
  telemetry_logs: boolean
}

export const DEFAULT_CONFIG: PdkConfig = Object.freeze({
  trusted_ips: [],
  real_ip_header: 'X-Real-IP',
  real_ip_recursive: false,
  lua_max_req_headers: 100,
  lua_max_resp_headers: 100,
  lua_max_uri_args: 100,
  lua_max_post_args: 100,
  client_body_buffer_size: 8 * 1024,
  port_maps: {},
  lua_transform_underscores_in_response_headers: true,
  telemetry_logs: true,
})

export type Table = Record<string, unknown>

export interface LogEntry {
  level: string
  line: string
}

export interface TelemetryEntry {
  plugin: string
  message_type: string
  message?: string
  attributes: Table
}

/** The request as the client sent it. */
export interface ClientRequest {
  method: string
  scheme: string
  host: string
  /** The port the gateway listens on (nginx server_port). */
  port: number
  /** Path and query exactly as sent (nginx request_uri). */
  uri: string
  headers: HeaderList
  body: Buffer
  httpVersion: number | undefined
  /** The peer directly connected. */
  peer: { ip: string; port: number; connection?: number; requests?: number }
  /** PEM chain the client presented, client certificate first. */
  tlsChain?: string
}

/** The request the proxied service will receive; service.request changes it. */
export interface UpstreamRequest {
  method: string
  scheme: string
  host: string
  port: number
  path: string
  query: string
  headers: HeaderList
  body: Buffer
  buffered: boolean
}

export interface ResponseState {
  status: number
  headers: HeaderList
  body: Buffer | undefined
  /** A plugin called response.exit or response.error. */
  exited: boolean
  /** A plugin failed with an error. */
  unexpected: boolean
  /** The proxied service answered. */
  proxied: boolean
  /**
   * A plugin set ngx.ctx.KONG_PROXIED: Kong then answers as for a proxied request (its latency headers and Via),
   * as proxy-cache does when it serves a cached answer.
   */
  kongProxied?: boolean
  /** The service's own answer, for service.response. */
  service?: { status: number; headers: HeaderList; body: Buffer }
}

/** The plugin whose code is running; the log, plugin and telemetry modules read it. */
/** One request a plugin sent (resty.http): `url` as scheme://host[:port]/path[?query], the default port left out. */
export interface SentRequest {
  method: string
  url: string
  headers: HeadersTable
  body: string
}

export interface CurrentPlugin {
  name: string
  id: string
  config: Table
}

export interface Context {
  phase: Phase
  /** --strict: calls must also be in the phases the reference lists. */
  strict?: boolean
  subsystem: 'http' | 'stream'
  config: PdkConfig
  /** Entities and data the fixture provides. */
  data: {
    node: { id: string; hostname: string; memory: MemoryData; statistics: Record<string, number> }
    clusterId?: string
    route?: Table
    service?: Table
    consumers: Table[]
    /** Upstream entities (service.set_upstream looks names up here). */
    upstreams: Table[]
    credentials: Table[]
    consumerGroups: Table[]
    /** consumer id → group ids (Kong's consumer_group_consumers mapping). */
    groupMembers: Record<string, string[]>
    vaults: Record<string, Record<string, string>>
    /** A regex route's groups (unnamed from 1, named) and, when it has any, the whole match (Kong's capture 0). */
    captures: { unnamed: string[]; named: Record<string, string>; whole?: string }
    strippedPrefix?: string
    /** Kong's router matched no route (the runner's `router` refused the request): Kong made no balancer_data. */
    unrouted?: boolean
    /** The fixture's answers to resty.http calls; undefined when it has none (resty.http then fails on use). */
    outbound?: OutboundEntry[]
  }
  request: ClientRequest
  /** After real-IP processing (nginx remote_addr / remote_port). */
  forwarded: { ip: string; port: number | undefined }
  upstream: UpstreamRequest
  response: ResponseState
  auth: { consumer?: Table; credential?: Table; groups?: Table[] }
  tls: { certificateRequested: boolean; caHints: boolean; sessionReuseDisabled: boolean; verifyOverride?: string }
  serializeValues: Array<{ key: string; value: unknown; mode: 'set' | 'add' | 'replace' }>
  shared: Map<string, unknown>
  webCtx: Map<string, unknown>
  logs: LogEntry[]
  telemetry: TelemetryEntry[]
  /** The requests Lua plugins sent with resty.http, in order. */
  outbound: SentRequest[]
  plugin?: CurrentPlugin
  /** Where a script plugin's call sits (file:line), for log lines. */
  site?: string
  /** The time the kit and the Lua host read (private/clock.ts). */
  clock: Clock
  startTime: number
  requestId: string
  /** Set by response.exit/error: the remaining plugins of the phase are skipped. */
  phaseEnded: boolean
  /** body_filter chunk state. */
  bodyBuffer?: Buffer
}

export interface MemoryData {
  lua_shared_dicts: Record<string, { capacity: number; allocated_slabs: number }>
  workers_lua_vms: Array<{ pid: number; http_allocated_gc: number }>
}
