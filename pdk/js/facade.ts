/**
 * The `kong` object handed to module plugins, as kong-js-pdk's plugin server builds it: any
 * property path is a call named by kong-js-pdk's camelCase → snake_case rule, answered the way
 * Kong 3.x answers external plugins (see external/bridge.ts): the first return value only,
 * so a soft failure (nil, err) resolves to undefined; a call that raises, and any call after
 * kong.response.exit, is never answered.
 */
import type { Context } from '../kit/context.js'
import { type KitTree, snakeCase } from '../kit/index.js'
import { NON_RETURN, serveCall, type Served } from '../external/bridge.js'
import type { Recorder } from '../kit/private/trace.js'
import { ClearingMap } from '../../util/clearing-map.js'

/** The error class kong-js-pdk exports for a failed call (`PDK.Error`); Kong 3.x never sends one. */
export class PDKError extends Error {
  override get name(): string {
    return 'PDKError'
  }
}

/** One plugin's run of one phase, as Kong drives it: over when the plugin exits or a call raises. */
export class PhaseSession {
  ended = false
  /** Kong's error when a call raised: the phase failed. */
  raised?: string
  /** Resolves when Kong stops listening to the plugin (exit or a raised call). */
  readonly done: Promise<void>
  private settle!: () => void
  /** Set once a call was answered asynchronously: later calls wait for it, as Kong serves one at a time. */
  tail: Promise<void> | undefined

  constructor() {
    this.done = new Promise<void>((r) => (this.settle = r))
  }

  end(raised?: string): void {
    if (this.ended) return
    this.ended = true
    this.raised = raised
    this.settle()
  }
}

export type Facade = Record<string, unknown>

interface State {
  kit: KitTree
  ctx: Context
  record: () => Recorder | undefined
  session: PhaseSession
}

// the facade hands out its state under this key (a WeakMap of short-lived facades cost GC time)
const STATE = Symbol('state')

const never = (): Promise<never> => new Promise<never>(() => undefined)

const noop = (): void => undefined

function call(state: State, method: string, args: unknown[]): Promise<unknown> {
  const session = state.session
  if (session.ended) return never()
  if (session.tail === undefined) return serve(state, session, method, args)
  const next = session.tail.then(() => serve(state, session, method, args))
  session.tail = next.then(noop, noop)
  return next
}

function serve(state: State, session: PhaseSession, method: string, args: unknown[]): Promise<unknown> {
  if (session.ended) return never()
  const served = serveCall(state.kit, state.ctx, method, args, state.record())
  if (!(served instanceof Promise)) return reply(session, method, served)
  const answered = served.then((s) => reply(session, method, s))
  session.tail = answered.then(noop, noop)
  return answered
}

function reply(session: PhaseSession, method: string, served: Served): Promise<unknown> {
  if (served.kind === 'raised') {
    session.end(served.message)
    // kong-js-pdk resolves exit at once, without waiting for Kong
    return NON_RETURN.has(method) ? Promise.resolve(undefined) : never()
  }
  if (served.kind === 'exit') {
    session.end()
    return Promise.resolve(undefined)
  }
  return Promise.resolve(served.value)
}

/** A bridge function: a call named by its path, whose properties are the paths below it. */
interface Node {
  (...args: unknown[]): Promise<unknown>
  state: State
  method: string
  children?: Map<string, unknown>
}

// kong-js-pdk recomputes the snake_case name on every property access; the answer never changes
const snakes = new ClearingMap<string, string>(1000)

// one handler for every node: the node (the proxy's target) carries its state, path and children
const handler: ProxyHandler<Node> = {
  get(node, name) {
    if (typeof name === 'symbol') return name === STATE ? node.state : undefined
    return node.children?.get(name) ?? child(node, name)
  },
}

function child(node: Node, name: string): unknown {
  let clean = snakes.get(name)
  if (clean === undefined) {
    snakes.set(name, (clean = snakeCase(name)))
  }
  const proxy = bridge(node.state, `${node.method}.${clean}`)
  ;(node.children ??= new Map()).set(name, proxy)
  return proxy
}

function bridge(state: State, method: string): unknown {
  const fn = ((...args: unknown[]): Promise<unknown> => call(state, method, args)) as Node
  fn.state = state
  fn.method = method
  return new Proxy(fn, handler)
}

/** The `kong` object for one scenario; `record` sees every call (for the trace). */
export function createFacade(kit: KitTree, ctx: Context, record: () => Recorder | undefined): Facade {
  const state: State = { kit, ctx, record, session: new PhaseSession() }
  return bridge(state, 'kong') as Facade
}

/** Starts a plugin's phase: calls made from now on belong to the returned session. */
export function openSession(kong: Facade): PhaseSession {
  const state = (kong as unknown as { [STATE]: State })[STATE]
  state.session = new PhaseSession()
  return state.session
}
