import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { runCliInProcess } from './cli-in-process.js'
import { freePort, waitFor } from './ports.js'

export const ROOT = resolve(import.meta.dirname, '..', '..')
export const BIN = resolve(ROOT, 'bin', 'run.js')

export interface BrokerProcess {
  port: number
  url: string
  proc: ChildProcess
  /** Everything the process wrote to stderr so far. */
  stderr(): string
  /** SIGTERM and wait for the exit; resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>
}

// The brokers started here and not stopped yet: a test that fails (or times out) before its stop() would
// leave them running after its file ends, still holding their ports and Redis connections while the next
// files run beside them. They are killed when this test process (a vitest fork) exits.
const running = new Set<ChildProcess>()
process.once('exit', () => {
  for (const proc of running) proc.kill('SIGKILL')
})

export interface StartBrokerOptions {
  args?: string[]
  env?: Record<string, string>
  cwd?: string
  port?: number
  /** Leave --port out: the port (`port`, then required) comes from the config file, as a user's would. */
  portFromConfig?: boolean
}

/**
 * Spawns `bin/run.js serve` as a user would, and waits until every worker is up: /ping answers (one
 * worker is) and `serve` has said it listens (it says so once the last worker is ready). A test that
 * failed Redis while a second worker was still starting saw that worker exit.
 */
export async function startBroker(opts: StartBrokerOptions = {}): Promise<BrokerProcess> {
  const port = opts.port ?? (await freePort())
  const portArgs = opts.portFromConfig ? [] : ['--port', String(port)]
  // A broker started in the checkout keeps its pid file (pid.dir, ./ by default) in a folder of its own:
  // brokers of other test files run in the checkout at the same time, and would share .broker.pid there.
  const args = opts.args ?? []
  const ownPidDir =
    opts.cwd === undefined && !args.includes('--pid-dir') && !opts.env?.BROKER_PID_DIR
      ? { BROKER_PID_DIR: `${mkdtempSync(join(tmpdir(), 'broker-pid-'))}/` }
      : {}
  const proc = spawn(process.execPath, [BIN, 'serve', ...portArgs, ...args], {
    cwd: opts.cwd ?? ROOT,
    env: { ...process.env, BROKER_LOG_LEVEL: 'warn', BROKER_WORKERS: '1', ...ownPidDir, ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  running.add(proc)
  let err = ''
  proc.stderr!.on('data', (d) => (err += d))
  proc.stdout!.resume()
  const url = `http://127.0.0.1:${port}`
  const exited = new Promise<number | null>((r) =>
    proc.once('exit', (code) => {
      running.delete(proc)
      r(code)
    }),
  )
  await Promise.race([
    waitFor(
      async () => (await fetch(`${url}/ping`)).ok && err.includes('listening on port'),
      20_000,
      `broker on ${port}, every worker up`,
    ),
    exited.then((code) => {
      throw new Error(`broker exited with ${code} before answering:\n${err}`)
    }),
  ]).catch((reason: unknown) => {
    // A broker that never came up is not left behind holding its port.
    proc.kill('SIGKILL')
    throw reason
  })
  return {
    port,
    url,
    proc,
    stderr: () => err,
    stop: async (signal = 'SIGTERM') => {
      if (proc.exitCode !== null) return proc.exitCode
      proc.kill(signal)
      return exited
    },
  }
}

/**
 * Runs `broker args` to completion: in this process (test/helpers/cli-in-process.ts), or as `bin/run.js`
 * in a child process with `spawn: true` or when the command reads `input` on its stdin. `timeoutMs` (a kill) applies
 * to a spawned run; one in process ends with the test's own timeout.
 */
export function runCli(
  args: string[],
  opts: { env?: Record<string, string>; cwd?: string; input?: string; timeoutMs?: number; spawn?: boolean } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  if (!opts.spawn && opts.input === undefined) return runCliInProcess(args, opts)
  return new Promise((resolvePromise) => {
    const proc = spawn(process.execPath, [BIN, ...args], {
      cwd: opts.cwd ?? ROOT,
      env: { ...process.env, BROKER_LOG_LEVEL: 'warn', ...opts.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    proc.stdout.on('data', (d) => (stdout += d))
    proc.stderr.on('data', (d) => (stderr += d))
    proc.stdin.end(opts.input ?? '')
    const timer = setTimeout(() => proc.kill('SIGKILL'), opts.timeoutMs ?? 30_000)
    proc.once('exit', (code) => {
      clearTimeout(timer)
      resolvePromise({ code, stdout, stderr })
    })
  })
}
