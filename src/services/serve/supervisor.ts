import type { BrokerError } from '../../errors/index.js'
import { lazyBrokerError } from '../../errors/lazy.js'
import type { WorkerMessage } from './setup.js'

/** What a worker process tells the supervisor; the fork function calls these. */
export interface WorkerEvents {
  message(msg: WorkerMessage): void
  exit(code: number | null, signal: string | null): void
}

/** What the supervisor does to a worker process. */
export interface WorkerControl {
  readonly pid: number | undefined
  /** Whether the IPC channel is still open, so a message can reach the worker. */
  isConnected(): boolean
  isDead(): boolean
  /** Asks a listening worker to finish its requests and exit. */
  shutdown(): void
  kill(signal: NodeJS.Signals): void
}

/** Starts one worker process whose news goes to `events`. */
export type ForkWorker = (events: WorkerEvents) => WorkerControl

export interface SupervisorOptions {
  workers: number
  fork: ForkWorker
  /** Called once, when as many workers as asked for have reported ready, with the port the last one listens on. */
  onListening?(port: number): void
  /**
   * A worker died once another had served; a new one starts after `delayMs`. `reason`: why it could
   * not start, when it said so (a replacement, or a second worker slower than the first).
   */
  onRestart?(exit: { pid: number | undefined; how: string; delayMs: number; reason?: string }): void
  /** How long a draining worker may take before it gets SIGKILL. */
  drainTimeoutMs?: number
}

export interface Stopped {
  /** What stop() was given: a signal's name. */
  reason: string
  /** The port the workers last reported, if any reported. */
  port: number | undefined
}

export interface Supervisor {
  /** Forks the workers; settles when all are gone after stop(), or rejects (after draining the rest) when no worker could start. */
  run(): Promise<Stopped>
  /** Stops restarting and drains: asks every worker to close, waits for each, SIGKILL after the deadline. A second call does nothing. */
  stop(reason: string): Promise<void>
  /** Stops at once: SIGKILL to every live worker (a second Ctrl-C during a drain). */
  halt(reason?: string): Promise<void>
}

export const BACKOFF_BASE_MS = 100
export const MAX_BACKOFF_MS = 30_000
/** Crashes further back than this no longer lengthen the backoff. */
export const CRASH_WINDOW_MS = 60_000
export const DRAIN_TIMEOUT_MS = 15_000

/** What the supervisor knows of one live worker. */
interface WorkerState {
  ready: boolean
  /** Why it could not start, as it reported before exiting. */
  reason?: string
  /** Drains waiting for this worker's exit. */
  exitWaiters: Array<() => void>
}

/**
 * Keeps `workers` processes running. A worker that dies after any worker has served is replaced: at
 * once for the first crash of the last minute, then after 100 ms doubled for each further one (30 s at most). Until some worker has
 * served, a worker that fails or exits means the setup is broken: the supervisor gives up at once.
 */
export function createSupervisor(opts: SupervisorOptions): Supervisor {
  const drainTimeoutMs = opts.drainTimeoutMs ?? DRAIN_TIMEOUT_MS
  const live = new Map<WorkerControl, WorkerState>()
  const crashes: number[] = []
  const pendingRestarts = new Set<ReturnType<typeof setTimeout>>()
  let stopping = false
  let everReady = false
  let announced = false
  let readyCount = 0
  let port: number | undefined
  let settle!: { resolve(stopped: Stopped): void; reject(err: Error): void }
  const done = new Promise<Stopped>((resolve, reject) => (settle = { resolve, reject }))

  const fork = (): void => {
    const state: WorkerState = { ready: false, exitWaiters: [] }
    const control = opts.fork({
      message: (msg) => {
        if (msg.type === 'ready') {
          state.ready = true
          everReady = true
          port = msg.port
          if (++readyCount === opts.workers && !announced) {
            announced = true
            opts.onListening?.(msg.port)
          }
        } else if (msg.type === 'fatal') {
          if (!everReady) void drain('fatal', lazyBrokerError('workerStartFailed', { reason: msg.message }))
          else state.reason = msg.message
        }
      },
      exit: (code, signal) => {
        live.delete(control)
        for (const wake of state.exitWaiters) wake()
        if (stopping) return
        const how = signal ?? `code ${code}`
        if (!everReady) return void drain('fatal', lazyBrokerError('workerExited', { how }))
        // Back off when workers keep dying, so a crash loop does not spin the CPU.
        const now = Date.now()
        crashes.push(now)
        while (crashes.length && now - crashes[0]! > CRASH_WINDOW_MS) crashes.shift()
        // The first crash of the window is replaced at once: with one worker (always so with the embedded
        // store) any wait is an outage. Only a crash loop waits, 100 ms doubling.
        const delayMs = crashes.length === 1 ? 0 : Math.min(MAX_BACKOFF_MS, BACKOFF_BASE_MS * 2 ** (crashes.length - 2))
        opts.onRestart?.({ pid: control.pid, how, delayMs, ...(state.reason ? { reason: state.reason } : {}) })
        if (state.ready) readyCount--
        // A referenced timer: when the only worker died, it is all that keeps the primary alive until the new one starts.
        const timer = setTimeout(() => {
          pendingRestarts.delete(timer)
          fork()
        }, delayMs)
        pendingRestarts.add(timer)
      },
    })
    live.set(control, state)
  }

  const closeOne = ([control, state]: [WorkerControl, WorkerState]): Promise<void> =>
    new Promise((resolve) => {
      const timer = setTimeout(() => {
        control.kill('SIGKILL')
        resolve()
      }, drainTimeoutMs)
      state.exitWaiters.push(() => {
        clearTimeout(timer)
        resolve()
      })
      // A worker still starting may not listen for messages yet; a signal reaches it either way.
      if (control.isConnected() && state.ready) control.shutdown()
      else control.kill('SIGTERM')
    })

  // The error is made while the workers drain (the registry loads only on failure); `stopping` is set
  // at once, so the first failure is the one reported.
  const drain = async (reason: string, error?: Promise<BrokerError>): Promise<void> => {
    if (stopping) return
    stopping = true
    for (const timer of pendingRestarts) clearTimeout(timer)
    pendingRestarts.clear()
    await Promise.all([...live].filter(([control]) => !control.isDead()).map(closeOne))
    if (error) settle.reject(await error)
    else settle.resolve({ reason, port })
  }

  return {
    run: () => {
      for (let i = 0; i < opts.workers; i++) fork()
      return done
    },
    stop: (reason) => drain(reason),
    halt: (reason = 'halt') => {
      const draining = drain(reason)
      for (const [control] of live) if (!control.isDead()) control.kill('SIGKILL')
      return draining
    },
  }
}
