/** Replays one fixture: the lifecycle, the plugins in each phase, the proxied service; verdict.ts judges the record. */
import type { Context } from '../kit/context.js'
import type { Clock } from '../kit/private/clock.js'
import { FixtureError, type LoadedFixture } from '../fixture/index.js'
import { HeaderList, type HeadersTable } from '../kit/private/headers.js'
import { createKit, type KitTree } from '../kit/index.js'
import { formatLine } from '../kit/log/line.js'
import { BEFORE_UPSTREAM, LIFECYCLE, type Phase } from '../kit/private/phases.js'
import { errorBody, responseType, statusMessage } from '../kit/response/formats.js'
import { sendHttp } from '../kit/response/send.js'
import { errorMessage, type CallRecord, type Recorder } from '../kit/private/trace.js'
import { type Failure, plain } from '../fixture/compare.js'
import type { PluginHandler, Scene } from '../kit/private/handler.js'
import { kongOrder } from './plugins.js'
import type { RunRecord, ScriptStep, UpstreamSnapshot } from './record.js'
import { verdict, type RunVerdict } from './verdict.js'
import { startWorkers } from './worker.js'
import { buildContext } from '../fixture/setup.js'
import { setUpstreamPath } from '../kit/private/upstream.js'

export interface PhaseTrace {
  phase: Phase
  plugin: string
  calls: CallRecord[]
  error?: string
}

export interface ScenarioResult {
  name: string
  file: string
  /** Pass or fail, and what failed (verdict.ts); `passed` and `failures` repeat its status and failures. */
  verdict: RunVerdict
  passed: boolean
  response: { status: number; headers: HeadersTable; body: string; source: 'exit' | 'error' | 'service' }
  upstream_request: UpstreamSnapshot | null
  phases: PhaseTrace[]
  logs: Array<{ level: string; line: string }>
  failures: Failure[]
  telemetry: unknown[]
}

const AFTER_UPSTREAM = new Set<Phase>(['response', 'header_filter', 'body_filter', 'log'])
/** Phases whose failure still lets the gateway answer with a 500. */
const ANSWERABLE = new Set<Phase>([
  'certificate',
  'rewrite',
  'access',
  'balancer',
  'preread',
  'response',
  'header_filter',
  'admin_api',
])

/** The phases a scenario runs: `run_phases`, or the subsystem's lifecycle. */
function phasesOf(ctx: Context, override: Phase[] | undefined): Phase[] {
  if (override) return override
  const tls = ctx.request.scheme === 'https' || ctx.request.scheme === 'tls'
  return LIFECYCLE[ctx.subsystem].filter((p) => p !== 'certificate' || tls)
}

function proxy(
  ctx: Context,
  loaded: LoadedFixture,
  plugins: PluginHandler[],
  answerOf?: RunOptions['upstream'],
): UpstreamSnapshot {
  const up = ctx.upstream
  const sent: UpstreamSnapshot = {
    method: up.method,
    path: up.path,
    query: up.query,
    // the service reads header values without surrounding whitespace (an empty value set as ' ' is empty)
    headers: trimmed(up.headers.table().headers),
    body: up.body.toString('utf8'),
  }
  const answer = answerOf?.(sent, ctx) ?? loaded.fixture.upstream ?? {}
  // a service answered in process may send bytes (a gRPC body); a fixture's body is text or JSON
  const body = answer.chunks
    ? answer.chunks.join('')
    : answer.body === undefined || answer.body === null
      ? ''
      : typeof answer.body === 'string' || Buffer.isBuffer(answer.body)
        ? answer.body
        : JSON.stringify(answer.body)
  const headers = HeaderList.from(answer.headers)
  if (typeof answer.body === 'object' && answer.body !== null && !headers.has('content-type'))
    headers.set('Content-Type', 'application/json')
  // a plugin with a response handler turns buffered proxying on, as in Kong
  if (plugins.some((p) => p.phases.has('response'))) up.buffered = true
  ctx.response.service = { status: answer.status ?? 200, headers: headers.clone(), body: Buffer.from(body) }
  const before = ctx.response.headers
  // what plugins set before proxying wins over the service's, each under the name the plugin gave it
  const merged = headers.clone()
  merged.overlay(before)
  ctx.response.status = answer.status ?? 200
  ctx.response.headers = merged
  ctx.response.body = Buffer.from(body)
  ctx.response.proxied = true
  return sent
}

/** The source as response.get_source reports it. */
const sourceOf = (ctx: Context): 'exit' | 'error' | 'service' =>
  ctx.response.unexpected ? 'error' : ctx.response.exited ? 'exit' : ctx.response.proxied ? 'service' : 'error'

const trimmed = (headers: HeadersTable): HeadersTable =>
  Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, Array.isArray(v) ? v.map((x) => x.trim()) : v.trim()]))

/** Where an error was raised, as a log line names it: a Lua error's `handler.lua:25`, else `handler:0`. */
function siteOf(message: string): string {
  // the message's own position, else the traceback's first frame in the plugin's files (not broker's, not C)
  const m =
    /^(?:[^\s:]*\/)?([^\s:/]+\.lua):(\d+):/.exec(message) ??
    /^\t(?!broker:)(?:[^\s:]*\/)?([^\s:/]+\.lua):(\d+): in /m.exec(message)
  return m ? `${m[1]}:${m[2]}` : 'handler:0'
}

/**
 * Kong's answer to a plugin error: reported in the error log, and while the answer can still change,
 * a 500 with source `error`. Past that (body_filter, log: the client has the upstream's answer) Kong
 * only logs it: `response.get_source` stays what the answer was (`service` for the upstream's).
 */
function fail(ctx: Context, plugin: PluginHandler, phase: Phase, message: string): void {
  ctx.logs.push({
    level: 'error',
    line: formatLine(ctx, 'error', `[${plugin.name}] ${phase} phase failed: ${message}`, siteOf(message)),
  })
  ctx.phaseEnded = true
  if (!ANSWERABLE.has(phase)) return
  ctx.response.unexpected = true
  ctx.response.headers = new HeaderList()
  // Kong's error handler reads Accept, else the request's Content-Type: a gRPC one gets its message as a
  // table, which kong.response.exit sends a gRPC request as grpc-status and grpc-message
  const accept = ctx.request.headers.all('accept').join(',') || undefined
  if ((accept ?? ctx.request.headers.get('content-type'))?.startsWith('application/grpc')) {
    sendHttp(ctx, 500, { message: statusMessage(500) }, undefined, () => {})
    return
  }
  const type = responseType(accept)
  const body = errorBody(type, statusMessage(500), ctx.requestId)
  ctx.response.status = 500
  ctx.response.headers.set('Content-Type', type)
  ctx.response.headers.set('Content-Length', String(Buffer.byteLength(body)))
  ctx.response.body = Buffer.from(body)
}

/** The response as it stands at one point of a replay (the dashboard steps through these). */
export type ResponseSnapshot = Pick<ScenarioResult['response'], 'status' | 'headers' | 'body'>

export interface ScenarioObserver {
  /** Called after each plugin's phase with its trace and the response as it stands then. */
  afterPhase?: (trace: PhaseTrace, response: ResponseSnapshot) => void
}

export interface RunOptions {
  /** Calls must also be in the phases the reference lists (`broker pdk run --strict`). */
  strict?: boolean
  /** Milliseconds a plugin's handler may run before Kong gives up on it (a hung event). */
  timeoutMs?: number
  /** The service's answer to what it was sent, in place of the fixture's `upstream` (spec.helpers' mock upstream). */
  upstream?: (sent: UpstreamSnapshot, ctx: Context) => LoadedFixture['fixture']['upstream']
  /** Whether a plugin runs in a phase, asked as it is reached (spec.helpers' plugin scoping by consumer). */
  runs?: (plugin: PluginHandler, phase: Phase, ctx: Context) => boolean
  /** The clock the request reads, in place of the fixture's (spec.helpers: the spec's virtual clock). */
  clock?: Clock
  /**
   * Kong's router, run as the access phase begins (after rewrite, before any plugin's access): the error it
   * answers a request with (spec.helpers' 404 for no route) is sent as kong.response.error sends one, and the
   * request skips access and goes on to header_filter, body_filter and log.
   */
  router?: (ctx: Context) => { status: number; message: string } | undefined
  /**
   * Kong's check, once access has run, that the route has a service to proxy to: the error it answers a request
   * with (spec.helpers' 503 for a route with none that no plugin answered) is sent as kong.response.error sends
   * one, in place of proxying, and the request goes on to header_filter, body_filter and log.
   */
  serviceCheck?: (ctx: Context) => { status: number; message: string } | undefined
}

/** A kit call as the trace shows it: its values plain. */
const plainCall = (c: CallRecord): CallRecord => ({
  call: c.call,
  args: plain(c.args) as unknown[],
  ...(c.throws !== undefined ? { throws: c.throws } : { returns: plain(c.returns) as unknown[] }),
  ...(c.expected ? { expected: true as const } : {}),
})

/** Runs a scenario with its prepared plugins and returns the trace, response and failures. */
export async function runScenario(
  loaded: LoadedFixture,
  plugins: PluginHandler[],
  observer: ScenarioObserver = {},
  options: RunOptions = {},
): Promise<ScenarioResult> {
  const f = loaded.fixture
  // Kong runs plugins by PRIORITY, higher first, in every phase; the fixture's order breaks ties
  plugins = kongOrder(plugins)
  const ctx = buildContext(f, { clock: options.clock })
  ctx.strict = options.strict === true
  const kit = createKit(ctx)
  let current: CallRecord[] = []
  const record: Recorder = (r) => current.push(r)
  const scene: Scene = { ctx, kit, record, timeoutMs: options.timeoutMs ?? 10_000, kept: new Map() }
  const steps: ScriptStep[] = []
  const phases: PhaseTrace[] = []
  let upstream: UpstreamSnapshot | null = null
  const order = phasesOf(ctx, f.run_phases)
  const reachesUpstream = order.some((p) => BEFORE_UPSTREAM.includes(p))
  // a worker starts before its first request (unless the fixture runs init_worker itself)
  if (!order.includes('init_worker')) {
    const traces: PhaseTrace[] = []
    const begin = (plugin: PluginHandler, handler: string) => {
      current = []
      const name = handler === 'configure' ? `${plugin.name}:configure` : plugin.name
      traces.push({ phase: 'init_worker', plugin: name, calls: current })
    }
    const steps = await startWorkers(plugins, scene, begin)
    steps.forEach((step, i) => {
      const trace = traces[i]!
      trace.calls = trace.calls.map(plainCall)
      if (step.error !== undefined) trace.error = step.error
    })
    phases.push(...traces)
  }

  for (const phase of order) {
    if (phase === 'access' && options.router && !ctx.response.exited && !ctx.response.unexpected) {
      const refusal = options.router(ctx)
      if (refusal) {
        ctx.phase = phase
        ctx.data.unrouted = true
        // nothing was routed: $upstream_uri keeps nginx's empty default (Kong sets it after access)
        setUpstreamPath(ctx, '')
        const error = (kit.response as KitTree).error as (status: number, message: string) => void
        error(refusal.status, refusal.message)
      }
    }
    if (
      AFTER_UPSTREAM.has(phase) &&
      options.serviceCheck &&
      reachesUpstream &&
      !ctx.response.exited &&
      !ctx.response.unexpected &&
      !ctx.response.proxied
    ) {
      const refusal = options.serviceCheck(ctx)
      if (refusal) {
        ctx.phase = 'access'
        const error = (kit.response as KitTree).error as (status: number, message: string) => void
        error(refusal.status, refusal.message)
      }
    }
    const stopped = ctx.response.exited || ctx.response.unexpected
    if (stopped && BEFORE_UPSTREAM.includes(phase)) continue
    if (AFTER_UPSTREAM.has(phase) && !stopped && !ctx.response.proxied && reachesUpstream)
      upstream = proxy(ctx, loaded, plugins, options.upstream)
    if (phase === 'response' && !ctx.response.proxied) continue
    ctx.phase = phase
    ctx.phaseEnded = false
    for (let i = 0; i < plugins.length && !ctx.phaseEnded; i++) {
      const plugin = plugins[i]!
      // asked of every plugin, so a scoping that collects in access sees them all (Kong's collecting iterator)
      if (options.runs && !options.runs(plugin, phase, ctx)) continue
      if (!plugin.phases.has(phase)) continue
      current = []
      const trace: PhaseTrace = { phase, plugin: plugin.name, calls: current }
      phases.push(trace)
      ctx.plugin = { name: plugin.name, id: plugin.id, config: plugin.config }
      let failed: string | undefined
      try {
        const outcome = await plugin.run(phase, scene)
        if (outcome.steps) steps.push(...outcome.steps)
        // what Kong only logged (a module plugin's own exception) leaves the request going
        if (outcome.logged !== undefined) trace.error = outcome.logged
        failed = outcome.failed
      } catch (e) {
        // a fixture that cannot run (a Lua plugin requiring an unemulated module) stops the run
        if (e instanceof FixtureError) throw e
        failed = errorMessage(e)
      } finally {
        ctx.plugin = undefined
      }
      // a failed handler fails the phase as in Kong: a 500 while it can answer, the error in the log
      if (failed !== undefined) {
        trace.error = failed
        fail(ctx, plugin, phase, failed)
      }
      trace.calls = current.map(plainCall)
      observer.afterPhase?.(trace, {
        status: ctx.response.status,
        headers: ctx.response.headers.table().headers,
        body: ctx.response.body?.toString('utf8') ?? '',
      })
    }
  }
  if (
    order.length > 0 &&
    !ctx.response.proxied &&
    !ctx.response.exited &&
    !ctx.response.unexpected &&
    reachesUpstream &&
    ctx.response.body === undefined
  ) {
    upstream = proxy(ctx, loaded, plugins, options.upstream)
  }
  const response = {
    status: ctx.response.status,
    headers: ctx.response.headers.table().headers,
    body: ctx.response.body?.toString('utf8') ?? null,
    source: sourceOf(ctx),
  }
  const logs = ctx.logs.map((l) => ({ ...l }))
  const produced: RunRecord = {
    steps,
    response,
    upstream,
    logs,
    telemetry: ctx.telemetry,
    phases,
    outbound: ctx.outbound,
  }
  const judged = verdict(f.expect, produced)
  return {
    name: f.name,
    file: loaded.file,
    verdict: judged,
    passed: judged.status === 'pass',
    response: { ...response, body: response.body ?? '' },
    upstream_request: upstream,
    phases,
    logs,
    failures: judged.failures,
    telemetry: plain(ctx.telemetry) as unknown[],
  }
}
