import cluster from 'node:cluster'
import { dirname, extname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { lazyBrokerError, lazyIsBrokerError } from '../../errors/lazy.js'
import { notice } from '../../notice.js'
import { claimPidFile } from './pid-file.js'
import { DRAIN_TIMEOUT_MS, type ForkWorker, createSupervisor } from './supervisor.js'
import type { PrimaryMessage, WorkerMessage, WorkerSetup } from './setup.js'

// The primary of `broker serve`: what it runs once the config is resolved. It imports no config
// schema, logger, Redis client or CLI framework: it only forks, watches and drains its workers.

export interface ServeResult {
  url: string
  port: number
  workers: number
  store: string
  pid_file: string
  /** How the primary stopped: a signal's name. */
  stopped_by: string
}

/** What the primary needs, all plain data: resolved (config file, flags, Redis probe) before it runs. */
export interface PrimaryPlan {
  setup: WorkerSetup
  pidFile: string
  url: string
  storeLabel: string
  /** server.drainDelay as it applies to this listen address (config/runtime.ts). */
  drainDelayMs: number
  /** Environment variables that hold secrets: not passed on to the workers. */
  secretEnv: readonly string[]
}

/**
 * What a worker's environment adds to this process's: glibc's malloc told to serve allocations of 32 KB
 * and more from their own mappings, always (its default starts at 128 KB and raises that threshold, and the
 * one for giving memory back, after the first large block is freed). The zones V8's optimizing compiler
 * allocates while a worker starts (in segments of 32 KB) then go back to the system when freed, where they
 * left 0.2–2.9 MB resident in a thread's arena of an idle worker, varying from start to start; under load
 * the lower threshold costs about 0.3 mmap or munmap calls a flow (docs/decisions/0012). A user's own
 * malloc settings stand.
 */
export function workerEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const own = Object.keys(env).some((name) => name === 'GLIBC_TUNABLES' || name.startsWith('MALLOC_'))
  return own ? {} : { MALLOC_MMAP_THRESHOLD_: String(32 * 1024) }
}

/** Forks cluster workers that run worker-main with `setup`. */
function clusterFork(setup: WorkerSetup): ForkWorker {
  const here = fileURLToPath(import.meta.url)
  const ext = extname(here)
  // Workers accept on the shared socket themselves: with the primary handing connections out
  // (round robin), a connection handed to a worker at the moment it dies hangs.
  cluster.schedulingPolicy = cluster.SCHED_NONE
  cluster.setupPrimary({
    exec: resolve(here, '..', `worker-main${ext}`),
    // One V8 platform thread instead of four: each keeps its own malloc arena, about 4 MB of an idle
    // worker, and the bench measured no change in CPU per flow. --expose-gc: one full collection once
    // the worker listens (worker.ts). docs/decisions/0012.
    execArgv: [...(ext === '.ts' ? ['--import', 'tsx'] : []), '--v8-pool-size=1', '--expose-gc'],
    silent: false,
  })
  return (events) => {
    const worker = cluster.fork(workerEnv(process.env))
    const send = (msg: PrimaryMessage) => worker.send(msg)
    worker.on('message', (msg: WorkerMessage) => {
      // The setup goes over IPC, once the worker listens for it; never in its environment (/proc/<pid>/environ).
      if (msg.type === 'setup?') send({ type: 'setup', setup })
      else events.message(msg)
    })
    worker.on('exit', (code: number | null, signal: string | null) => events.exit(code, signal))
    return {
      get pid() {
        return worker.process.pid
      },
      isConnected: () => worker.isConnected(),
      isDead: () => worker.isDead(),
      shutdown: () => void send({ type: 'shutdown' }),
      kill: (signal) => void worker.process.kill(signal),
    }
  }
}

/** `broker serve`'s primary process: forks the workers, restarts the dead, drains on SIGTERM/SIGINT. */
export async function runPrimary(plan: PrimaryPlan): Promise<ServeResult> {
  const { setup, pidFile, url, storeLabel } = plan
  const { config } = setup
  // A second broker in the same directory gets its own pid file, named by its port.
  const pid = await claimPidFile(pidFile, join(dirname(pidFile), `.broker.${config.port}.pid`), (held) =>
    notice(`${held.file} belongs to the running broker ${held.pid}: this one's pid file is ${held.instead}`),
  )

  // Workers get the config over IPC; secrets given in this process's environment are not passed on
  // in theirs (a forked process inherits it, readable in /proc/<pid>/environ).
  for (const name of plan.secretEnv) delete process.env[name]

  const { workers } = config
  const supervisor = createSupervisor({
    workers,
    fork: clusterFork(setup),
    // A draining worker first waits server.drainDelay with the listener open (see worker.ts).
    drainTimeoutMs: DRAIN_TIMEOUT_MS + plan.drainDelayMs,
    onListening: (port) =>
      notice(
        `listening on port ${port} (${url}), ${workers} worker${workers > 1 ? 's' : ''}, store: ${storeLabel}, pid ${process.pid}`,
      ),
    onRestart: ({ pid, how, delayMs, reason }) =>
      notice(
        `worker ${pid} exited (${how})${reason ? `: it could not start: ${reason}` : ''}; starting a new one in ${delayMs} ms`,
      ),
  })
  // The first signal drains, saying for how long (a silent wait reads as a hang); a second stops at once.
  let signalled = false
  const onSignal = (signal: NodeJS.Signals) => {
    if (signalled) {
      notice(`${signal} again: stopping at once`)
      return void supervisor.halt(signal)
    }
    signalled = true
    notice(drainNotice(signal, plan.drainDelayMs))
    void supervisor.stop(signal)
  }
  const onTerm = () => onSignal('SIGTERM')
  const onInt = () => onSignal('SIGINT')
  process.on('SIGTERM', onTerm)
  process.on('SIGINT', onInt)
  let stopped
  try {
    stopped = await supervisor.run()
  } catch (err) {
    // Every worker failing to listen on a busy port is the user's to fix with --port.
    throw (await lazyIsBrokerError(err)) && /\bEADDRINUSE\b/.test((err as Error).message)
      ? await lazyBrokerError('portInUse', { port: config.port })
      : err
  } finally {
    await pid.release()
    process.off('SIGTERM', onTerm)
    process.off('SIGINT', onInt)
  }
  notice(`stopped (${stopped.reason})`)
  return {
    url,
    port: stopped.port ?? config.port,
    workers,
    store: storeLabel,
    pid_file: pid.file,
    stopped_by: stopped.reason,
  }
}

/** What the primary says on the first SIGTERM or SIGINT: a silent drain reads as a hang. */
export function drainNotice(signal: string, delayMs: number): string {
  const again = `${signal === 'SIGINT' ? 'Ctrl-C' : signal} again stops at once.`
  return delayMs > 0
    ? `${signal}: draining for ${delayMs / 1000} s (server.drainDelay): /ping answers 503 meanwhile, then requests in flight finish. ${again}`
    : `${signal}: stopping; requests in flight finish (at most ${DRAIN_TIMEOUT_MS / 1000} s). ${again}`
}
