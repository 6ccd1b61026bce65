/**
 * Kong as spec.helpers starts it, in process: a request from proxy_client is routed (router.ts),
 * the plugins configured for it are picked as Kong picks them (scoping.ts: one instance per name,
 * the most specific wins, a consumer's as it is authenticated), and the request is replayed through the same runner,
 * kit and Lua runtime `broker pdk run` uses; the service is Kong's mock upstream (mock-upstream.ts).
 */
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { runAdminRoute, type AdminRouteAnswer, type AdminRouteRequest } from './admin-route.js'
import { MockLogs } from './mock-logs.js'
import { mockUpstream, type UpstreamAnswer } from './mock-upstream.js'
import { ZipkinCollector } from './zipkin.js'
import {
  textOrBytes,
  configKeys,
  FixtureError,
  LuaError,
  luaHandler,
  preparePlugins,
  runScenario,
  type PluginHandler,
  type Fixture,
  type HeadersTable,
  type LuaRuntime,
  type UpstreamSnapshot,
  type Context,
  VirtualClock,
  type Clock,
} from './pdk.js'
import { httpsRequired, matchRoute, type RouteRow } from './router.js'
import { normalizePath } from '../kit/request/path.js'
import type { RecordedPlugin, RecordState, SpecRecorder } from './record.js'
import { candidates, globals, Scoping } from './scoping.js'
import { dechunk, serviceAnswer } from './upstream.js'
import {
  grpcbin,
  grpcKongError,
  grpcRouteRefusal,
  grpcServiceNotEmulated,
  isGrpcbin,
  isGrpcRequest,
  runGrpcurl,
  type GrpcAnswer,
  type GrpcurlLine,
  type GrpcurlResult,
  type Transport,
} from './grpc/index.js'

type Row = { id: string; [k: string]: unknown }

/** What spec.helpers' client sends the host: the request and the database as it stands. */
export interface ProxyRequest {
  method: string
  path: string
  query?: string
  headers?: Record<string, string | string[]>
  body?: string
  /** The Kong listener the client connected to (spec.helpers' proxy ports: 9000, or 9443 for TLS). */
  port?: number
  /** The client's connection: nginx's serial number of it, and the requests made on it (this one included). */
  connection?: { serial?: number; requests?: number }
  /** The HTTP version the client speaks (resty.http's `version`: 1.0 or 1.1). */
  version?: number
  /** Bumped when start_kong loads the plugins afresh: the instances made before are forgotten. */
  generation?: number
  /** Kong's server tokens (`kong/3.9.1`), for Server and Via. */
  server?: string
  /** Ports of the http_mock servers the spec started. */
  mocks?: number[]
  /** What --record needs besides the request (broker/spec/record.lua). */
  state?: RecordState
  /** Kong's configuration as start_kong was given it: who the client is behind proxies. */
  conf?: { trusted_ips?: string[] | object; real_ip_header?: string; real_ip_recursive?: boolean }
  db: {
    routes?: Row[] | object
    services?: Row[] | object
    plugins?: Row[] | object
    consumers?: Row[] | object
    upstreams?: Row[] | object
    targets?: Row[] | object
  }
}

/** The answer the client gets: a response, or an error the spec's line raises. */
export type ProxyAnswer =
  | UpstreamAnswer
  | {
      status: number
      headers: HeadersTable
      /** Text, or the bytes when they are not UTF-8. */
      body: string | Buffer
      /** The request's lines in Kong's error.log format (assert.logfile() reads them). */
      log?: string[]
    }
  | { raise: string }

/** A gRPC call's answer: the body as bytes, the service's trailers when it streamed. */
type GrpcProxyAnswer = (GrpcAnswer & { log?: string[] }) | { raise: string }

const NO_ROUTE = 'no Route matched with those values'
const NO_SERVICE = 'no Service found with those values'

const loadFailure = (e: unknown): string =>
  `a plugin failed to load: ${e instanceof LuaError ? e.message.replace(/\nstack traceback:[\s\S]*$/, '') : e instanceof FixtureError ? e.reason : String(e)}`

const rows = <T = Row>(v: unknown): T[] => (Array.isArray(v) ? (v as T[]) : [])
const idOf = (v: unknown): string | undefined => (v && typeof v === 'object' ? (v as Row).id : undefined)

/** Where a root keeps its kong-js-pdk plugins: the folder kong-js-pluginserver's --plugins-directory names. */
const JS_DIRS = ['js-plugins']
const JS_EXTENSIONS = ['.js', '.mjs', '.cjs', '.ts']

/** Kong's test listeners as spec.helpers names them (get_proxy_port): plain HTTP/1.1 and TLS. */
const PLAIN = { scheme: 'http', port: 9000 } as const
const TLS_PORT = 9443

export class InProcessKong {
  private readonly loaded = new Map<string, PluginHandler>()
  /** What plugins posted to the mock upstream's /post_log locations. */
  private readonly mockLogs = new MockLogs()
  /** The Zipkin collector helpers.zipkin_host names: what plugins posted to it. */
  private readonly zipkin = new ZipkinCollector()
  private slots = 0
  private generation = 0

  constructor(
    readonly runtime: LuaRuntime,
    readonly root: string,
    readonly timeoutMs = 10_000,
    readonly clock: Clock = new VirtualClock(Date.now()),
    /** broker pdk test --record: each proxied request written as a fixture. */
    readonly recorder?: SpecRecorder,
    /** The spec's environment (helpers.setenv), which Kong's env vault reads: `{vault://env/<name>}`. */
    readonly env: Record<string, string> = {},
  ) {}

  /** A host request of spec.helpers: `proxy` (through Kong) or `upstream` (the mock upstream itself). */
  async handle(op: string, payload: unknown): Promise<ProxyAnswer | GrpcurlResult | AdminRouteAnswer> {
    const req = payload as ProxyRequest
    if (op === 'upstream' || op === 'zipkin') return this.serverAnswer(op, req)
    if (op === 'proxy') return this.proxy(req)
    // a plugin's own Admin API route (its api.lua), which admin_routes.lua matched
    if (op === 'admin_route') {
      this.renew(req)
      const plugins: PluginHandler[] = []
      try {
        for (const row of rows(req.db?.plugins)) plugins.push(await this.plugin(row))
      } catch (e) {
        return { raise: loadFailure(e) }
      }
      return runAdminRoute(this.runtime, this.clock, payload as AdminRouteRequest, this.timeoutMs, plugins)
    }
    if (op === 'grpc')
      return runGrpcurl(payload as GrpcurlLine, (request, transport) =>
        this.proxyGrpc({ ...req, ...request }, transport),
      )
    if (op === 'js_plugin') {
      const file = this.jsModule(String((payload as { name?: unknown }).name))
      return { status: 200, headers: {}, body: file ?? '' }
    }
    return { raise: `spec.helpers: ${op} is not emulated by broker` }
  }

  /**
   * The answer of a server in process that answers at once, Kong's mock upstream or the Zipkin collector: to
   * spec.helpers' clients, and to a plugin's resty.http from a timer or from inside a phase alike.
   */
  serverAnswer(op: 'upstream' | 'zipkin', req: ProxyRequest): ProxyAnswer {
    if (op === 'upstream') {
      const headers = (req.headers ?? {}) as HeadersTable
      const sent = { method: req.method, path: req.path, query: req.query ?? '', headers, body: req.body ?? '' }
      return this.mockLogs.answer(sent) ?? mockUpstream(sent, '127.0.0.1', this.clock.now())
    }
    const sent = { method: req.method, path: req.path, query: req.query ?? '', headers: {}, body: req.body ?? '' }
    return this.zipkin.answer(sent, this.clock.now())
  }

  /**
   * A Kong started again (start_kong bumps the generation): the plugin instances made before are forgotten, and
   * its new workers start afresh (the plugins' modules were loaded anew: prometheus's counters are made again).
   */
  private renew(req: ProxyRequest): void {
    if ((req.generation ?? 0) !== this.generation) {
      this.generation = req.generation ?? 0
      this.loaded.clear()
      this.runtime.worker.started = false
      this.runtime.worker.errors = []
    }
  }

  /** The kong-js-pdk module of a plugin the root has no handler.lua for: js-plugins/<name>.js (.mjs, .cjs, .ts). */
  jsModule(name: string): string | undefined {
    if (!/^[A-Za-z0-9_-]+$/.test(name) || existsSync(join(this.root, 'kong', 'plugins', name, 'handler.lua')))
      return undefined
    for (const dir of JS_DIRS)
      for (const ext of JS_EXTENSIONS) {
        const file = join(this.root, dir, name + ext)
        if (existsSync(file)) return file
      }
    return undefined
  }

  private async plugin(row: Row): Promise<PluginHandler> {
    const key = `${row.id}:${JSON.stringify(row.config)}`
    let p = this.loaded.get(key)
    if (p) return p
    const index = ++this.slots
    const name = String(row.name)
    const js = this.jsModule(name)
    if (js) {
      // a JS plugin runs in process through the kit, as `broker pdk run` runs one: ordered with the Lua ones by PRIORITY
      const [prepared] = await preparePlugins({
        file: js,
        dir: this.root,
        fixture: {
          name,
          request: { url: 'http://localhost/' },
          plugins: [{ name, module: js, id: row.id, config: (row.config ?? {}) as Record<string, unknown> }],
        },
      })
      p = { ...prepared!, index }
      this.loaded.set(key, p)
      return p
    }
    // Kong hands a plugin its config with the ids of its scope and its own (rate-limiting keys counters on
    // them), and its instance name (kong.tools.queue names the plugin by it in its log lines)
    const scope = (k: string) => (idOf(row[k]) === undefined ? {} : { [`${k}_id`]: idOf(row[k]) })
    const ids = { ...scope('route'), ...scope('service'), ...scope('consumer') }
    const config = {
      ...((row.config ?? {}) as Record<string, unknown>),
      ...ids,
      ...(typeof row.instance_name === 'string' ? { plugin_instance_name: row.instance_name } : {}),
      __plugin_id: row.id,
      ...configKeys(name, ids, typeof row.ws_id === 'string' ? row.ws_id : '', index),
    }
    p = luaHandler({
      index,
      name,
      id: row.id,
      config,
      info: this.runtime.load(index, name, config),
      runtime: this.runtime,
    })
    this.loaded.set(key, p)
    return p
  }

  /** A plugin instance that ran, as --record's fixture names it: its module, its row's config and scope. */
  private recorded(p: PluginHandler, row: Row | undefined): RecordedPlugin {
    const scope = (k: 'route' | 'service' | 'consumer') => {
      const id = idOf(row?.[k])
      return id === undefined ? {} : { [k]: { id } }
    }
    const dirs = [this.root, ...(this.recorder?.roots ?? [])]
    const lua = dirs.map((d) => join(d, 'kong', 'plugins', p.name)).find((d) => existsSync(join(d, 'handler.lua')))
    return {
      name: p.name,
      id: p.id ?? String(row?.id),
      module: this.jsModule(p.name) ?? lua ?? join(this.root, 'kong', 'plugins', p.name),
      config: (row?.config ?? {}) as Record<string, unknown>,
      ...scope('route'),
      ...scope('service'),
      ...scope('consumer'),
    }
  }

  /** A gRPC call through Kong: the answer with its body as bytes and the trailers grpcbin sent. */
  private async proxyGrpc(req: ProxyRequest, transport: Transport): Promise<GrpcProxyAnswer> {
    const seen: { ctx?: Context; trailers?: Record<string, string> } = {}
    const answer = await this.proxy(req, transport, seen)
    if ('raise' in answer) return answer
    return {
      status: answer.status,
      headers: answer.headers,
      body: seen.ctx?.response.body ?? Buffer.from(answer.body),
      ...(seen.trailers ? { trailers: seen.trailers } : {}),
      ...('log' in answer && answer.log ? { log: answer.log } : {}),
    }
  }

  private async proxy(
    req: ProxyRequest,
    transport?: Transport,
    /** A gRPC call's: the request's context (its response body as bytes) and grpcbin's trailers. */
    seen: { ctx?: Context; trailers?: Record<string, string> } = {},
  ): Promise<ProxyAnswer> {
    // a spec's own call of an unemulated module (ngx.socket.tcp in a #tcp test) raised at its line already
    this.runtime.forgetUnsupportedCalls()
    this.renew(req)
    const headers = req.headers ?? {}
    // the scheme and port the request came in on: a gRPC call's own, or the listener the client connected to
    const listener = transport ?? (req.port === TLS_PORT ? { scheme: 'https', port: TLS_PORT } : PLAIN)
    const hostKey = Object.keys(headers).find((k) => k.toLowerCase() === 'host')
    const hostHeader = hostKey ? String(([] as string[]).concat(headers[hostKey]!)[0]) : '127.0.0.1:9000'
    const route = matchRoute(rows<RouteRow>(req.db.routes), {
      method: req.method,
      host: hostHeader.replace(/:\d+$/, '').toLowerCase(),
      // Kong's router matches the normalized path (merged slashes, dot segments, unreserved escapes decoded)
      path: normalizePath(req.path.replace(/\?.*$/, '')),
      headers,
      protocol: listener.scheme,
    })
    const grpc = isGrpcRequest(headers, transport)
    if (!route && grpc) return grpcKongError(404, 5, NO_ROUTE)
    const refused =
      route &&
      (grpcRouteRefusal(rows<string>(route.protocols), headers, transport) ??
        httpsRequired(
          route,
          listener.scheme,
          hostHeader.replace(/:\d+$/, ''),
          req.path + (req.query ? `?${req.query}` : ''),
        ))
    if (refused) return refused
    const service = route && rows(req.db.services).find((s) => s.id === idOf(route.service))
    let plugins: PluginHandler[]
    // a request no route matches still runs the global plugins around Kong's 404 (the router's answer below)
    const configured = route ? candidates(rows(req.db.plugins), route, service) : globals(rows(req.db.plugins))
    const scoping = new Scoping(configured, route, service)
    const byId = new Map(configured.map((row) => [row.id, row]))
    try {
      plugins = []
      for (const row of configured) plugins.push(await this.plugin(row))
    } catch (e) {
      return { raise: loadFailure(e) }
    }
    // a chunked body (Transfer-Encoding: chunked, framed by the spec itself) reaches plugins as nginx reads it
    const chunked = Object.entries(headers).some(
      ([k, v]) => k.toLowerCase() === 'transfer-encoding' && String(v).toLowerCase().includes('chunked'),
    )
    const body = transport?.body ?? (chunked && req.body !== undefined ? (dechunk(req.body) ?? req.body) : req.body)
    // for --record: the instance of each plugin name that ran (the last phase's: access picks the scoped one),
    // and the service's answer
    const ran = new Map<string, PluginHandler>()
    let answered: Fixture['upstream']
    const startedAt = this.clock.now()
    const query = req.query ? `?${req.query}` : ''
    const fixture: Fixture = {
      name: `${req.method} ${req.path}`,
      request: {
        method: req.method,
        url: `${listener.scheme}://127.0.0.1:${listener.port}${req.path}${query}`,
        headers,
        body,
        ...(transport?.http2
          ? { http_version: 2 }
          : req.version === 1 || req.version === 1.1
            ? { http_version: req.version }
            : {}),
        ...(req.connection?.serial
          ? { client: { connection: req.connection.serial, requests: req.connection.requests ?? 1 } }
          : {}),
      },
      route,
      service,
      consumers: rows(req.db.consumers),
      plugins: [],
      vault: { env: this.env },
      config: {
        trusted_ips: rows<string>(req.conf?.trusted_ips),
        ...(req.conf?.real_ip_header ? { real_ip_header: req.conf.real_ip_header } : {}),
        ...(req.conf?.real_ip_recursive ? { real_ip_recursive: true } : {}),
      },
    }
    const answerOf = (sent: UpstreamSnapshot, ctx: Context): Fixture['upstream'] => {
      seen.ctx = ctx
      if (service && (service.protocol === 'grpc' || service.protocol === 'grpcs')) {
        // grpcbin reads the request's bytes; a gRPC service broker does not answer is Unavailable, naming it
        const { trailers, ...answer } = isGrpcbin(service)
          ? grpcbin({ method: sent.method, path: sent.path, headers: sent.headers, body: ctx.upstream.body })
          : grpcServiceNotEmulated(service)
        if (trailers) seen.trailers = trailers
        return answer
      }
      // where the balancer sends it: the service, or the target a plugin set (ai-proxy's upstream_url); a host that
      // names an upstream entity is one of its targets (the first with a weight)
      const balanced = balancedTarget(req.db, ctx.upstream.host)
      const target = service && { ...service, host: ctx.upstream.host, port: ctx.upstream.port, ...balanced }
      // a target on a started http_mock: its routes answer in the spec's VM (spec/helpers/http_mock.lua), where
      // the target's host is this machine or a name the started Kong's dns_mock resolves to it
      const port = Number(target?.port)
      // (only a routed request reaches its service: the router answered the others)
      if (rows<number>(req.mocks).includes(port)) {
        // its headers as Kong's mock keeps them: ngx.req.get_headers(nil, true), the names in the case sent
        const headers = ctx.upstream.headers.table(Infinity, (name) => name).headers
        const request = { method: sent.method, path: sent.path, query: sent.query, headers, body: sent.body }
        const [answer] = this.runtime.vm.call('__spec_mock_answer', String(target?.host), port, request)
        if (answer) return answer as Fixture['upstream']
      }
      return serviceAnswer(
        target,
        route!,
        sent,
        ctx.request.peer.ip,
        hostHeader,
        ctx.forwarded.ip,
        this.clock.now(),
        listener,
      )
    }
    try {
      const result = await runScenario(
        { file: 'spec', dir: this.root, fixture },
        plugins,
        {},
        {
          timeoutMs: this.timeoutMs,
          clock: this.clock,
          runs: (plugin, phase, ctx) => {
            seen.ctx = ctx
            const row = plugin.id === undefined ? undefined : byId.get(plugin.id)
            const yes = !row || scoping.runs(row, plugin.name, phase, ctx.auth.consumer?.id as string | undefined)
            if (yes && plugin.phases.has(phase)) ran.set(plugin.name, plugin)
            return yes
          },
          upstream: (sent, ctx) => (answered = answerOf(sent, ctx)),
          router: () => (route ? undefined : { status: 404, message: NO_ROUTE }),
          // a route with no service, once no plugin answered in access: Kong's 503
          serviceCheck: () => (route && !service ? { status: 503, message: NO_SERVICE } : undefined),
        },
      )
      const out = result.response
      // a gRPC call is not written as a fixture: a fixture's body is text, a gRPC body bytes; nor is a request
      // no route matched (a fixture has no way to say its router answers)
      if (this.recorder && !transport && route) {
        const recorded = [...ran.values()].map((p) => this.recorded(p, byId.get(p.id ?? '')))
        this.recorder.write({ ...fixture, upstream: answered }, req.state ?? {}, recorded, startedAt, result)
      }
      const server = req.server ?? 'kong/3.9.1'
      const extra: Record<string, string> =
        out.source === 'service' || seen.ctx?.response.kongProxied
          ? { Via: `1.1 ${server}`, 'X-Kong-Upstream-Latency': '0', 'X-Kong-Proxy-Latency': '0' }
          : { Server: server, 'X-Kong-Response-Latency': '0' }
      const headers: HeadersTable = { ...extra, ...out.headers }
      // nginx sends no body, so no Content-Length, with a 204 or a 304
      if (out.status === 204 || out.status === 304)
        for (const name of Object.keys(headers)) if (name.toLowerCase() === 'content-length') delete headers[name]
      // the client reads the body as the kit hands bodies out (bytes that are not UTF-8 stay bytes: a gzip body a
      // plugin made); a scenario's report holds it as text
      const bytes = seen.ctx?.response.body
      return {
        status: out.status,
        headers,
        body: bytes ? textOrBytes(bytes) : out.body,
        log: result.logs.map((l) => l.line.replace(' [gateway] ', ' [kong] ')),
      }
    } catch (e) {
      if (e instanceof FixtureError) return { raise: e.reason }
      throw e
    }
  }
}

/**
 * The target Kong's balancer picks when a service's host names an upstream entity: the first of its targets with a
 * weight, as `{ host, port }` (a target without a port is on 8000, Kong's default). Undefined for any other host.
 */
function balancedTarget(
  db: { upstreams?: unknown; targets?: unknown },
  host: string,
): { host: string; port: number } | undefined {
  const upstream = rows<Row>(db.upstreams).find((u) => u.name === host)
  if (!upstream) return undefined
  const target = rows<Row>(db.targets).find(
    (t) => idOf(t.upstream) === upstream.id && Number(t.weight ?? 100) > 0 && typeof t.target === 'string',
  )
  const m = target && /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(String(target.target))
  return m ? { host: m[1]!.replace(/^\[|\]$/g, ''), port: Number(m[2] ?? 8000) } : undefined
}
