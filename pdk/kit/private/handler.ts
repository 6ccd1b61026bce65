/**
 * The one shape every face loads a plugin into, as Kong's runloop/plugin_servers/plugin.lua turns a remote
 * plugin into an ordinary handler table: a name, a PRIORITY, the handlers it has, and one way to run them.
 * The runner sees only this; how a face runs its plugin (a module in process, a plugin server, a Lua VM, a
 * call script) stays in the face.
 */
import type { Context } from '../context.js'
import type { KitTree } from '../index.js'
import type { Phase } from './phases.js'
import type { Recorder, ScriptStep } from './trace.js'

/** What Kong calls a handler by: a phase, or `configure` (in init_worker, with every config of the plugin). */
export type HandlerName = Phase | 'configure'

/** One request a handler runs in: its state, its kit, where its kit calls are recorded, how long it may take. */
export interface Scene {
  readonly ctx: Context
  readonly kit: KitTree
  /** Records each kit call the running handler makes (the trace). */
  readonly record: Recorder
  /** Milliseconds a handler may run before Kong gives up on it (a hung plugin). */
  readonly timeoutMs: number
  /**
   * What a face keeps for this request, under a key of its own (the JS face's `kong` object). Held by the scene
   * rather than in a WeakMap keyed by the request: a WeakMap of short-lived entries cost GC time in the bench.
   */
  readonly kept: Map<symbol, unknown>
}

/** How a handler ended, when not plainly. */
export interface HandlerOutcome {
  /** The handler failed: Kong logs it and, while the answer can still change, answers 500. */
  failed?: string
  /** What Kong logged while the request went on (a plugin server's report of an exception the plugin threw). */
  logged?: string
  /** A call script's calls, as they ran (the verdict reads them). */
  steps?: readonly ScriptStep[]
}

/** A worker a plugin lives in (a Lua VM): Kong runs init_worker and configure once per worker. */
export interface WorkerState {
  started: boolean
  /** The init_worker errors logged, repeated in an alert on every request after. */
  errors: string[]
}

/** One configured plugin, whichever face loaded it. */
export interface PluginHandler {
  /** Its slot in the fixture: among equal PRIORITY, the fixture's order. */
  readonly index: number
  readonly name: string
  readonly id: string
  /** Its configuration, defaults filled where the face knows the schema. */
  readonly config: Record<string, unknown>
  /** Kong's PRIORITY: higher runs first (0 when the plugin has none). */
  readonly priority: number
  readonly version?: string
  /** The handlers it has; Kong calls no others. */
  readonly phases: ReadonlySet<string>
  /** The worker it lives in, when its face has one. */
  readonly worker?: WorkerState
  /** Runs one of its handlers; throws only what stops the whole run (a fixture that cannot run). */
  run(handler: HandlerName, scene: Scene): Promise<HandlerOutcome>
  /** Frees what it holds (a Lua VM); safe to call more than once. */
  close?(): void
}

/** Nothing to report: the handler ran. */
export const RAN: HandlerOutcome = Object.freeze({})
