import { format } from 'node:util'
import { ROOT } from './broker.js'

// `broker <args>` run inside this test process, as oclif runs it (Config.load once, then run), the way
// Shopify's CLI tests run theirs: a spawn costs 0.3–0.6 s of CPU on this machine (Node and oclif starting,
// the command's modules loading), and the test suite is CPU-bound. What a spawn proves (bin/run.js, the
// exit code reaching the shell, signals, stdin) is proven by the tests that still spawn (runCli's
// `spawn: true`, spawnCli, startBroker). The built CLI runs: dist/, as bin/run.js runs it.
//
// One run at a time per test process: process.env, the working directory, process.exitCode and the two
// output streams are the command's while it runs.

export interface CliResult {
  code: number | null
  stdout: string
  stderr: string
}

let loaded: Promise<typeof import('@oclif/core')> | undefined
let queue: Promise<unknown> = Promise.resolve()

async function load() {
  const oclif = await import('@oclif/core')
  const { settings } = await import('@oclif/core/settings')
  // As bin/run.js: dist/ only, never the TypeScript sources (oclif would transpile them under NODE_ENV=test).
  settings.enableAutoTranspile = false
  return oclif
}

/** Runs `broker <args>` in this process with `env` added to the environment; what it printed and its exit code. */
export function runCliInProcess(args: string[], opts: { env?: Record<string, string>; cwd?: string } = {}) {
  const run = queue.then(() => runOnce(args, opts))
  queue = run.catch(() => undefined)
  return run
}

async function runOnce(args: string[], opts: { env?: Record<string, string>; cwd?: string }): Promise<CliResult> {
  const oclif = await (loaded ??= load())
  // A config of its own per run, as each process has: commands and plugins change theirs.
  const config = await oclif.Config.load({ root: ROOT })
  const env = { BROKER_LOG_LEVEL: 'warn', ...opts.env }
  const savedEnv = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]))
  const savedCwd = process.cwd()
  const savedExitCode = process.exitCode
  const writes = { stdout: process.stdout.write, stderr: process.stderr.write }
  const out = { stdout: '', stderr: '' }
  const capture = (stream: 'stdout' | 'stderr') =>
    function (this: NodeJS.WriteStream, chunk: unknown, ...rest: unknown[]) {
      out[stream] += typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString()
      const done = rest.find((r) => typeof r === 'function') as (() => void) | undefined
      if (done) queueMicrotask(done)
      return true
    } as typeof process.stdout.write
  Object.assign(process.env, env)
  if (opts.cwd) process.chdir(opts.cwd)
  process.exitCode = undefined
  process.stdout.write = capture('stdout')
  process.stderr.write = capture('stderr')
  // oclif prints with console.log and console.error, which vitest has replaced by its own.
  const consoles = { log: console.log, info: console.info, error: console.error, warn: console.warn }
  console.log = console.info = (...a: unknown[]) => void (out.stdout += `${format(...a)}\n`)
  console.error = console.warn = (...a: unknown[]) => void (out.stderr += `${format(...a)}\n`)
  let code: number | null
  try {
    await oclif.run(args, config)
    code = Number(process.exitCode ?? 0)
  } catch (err) {
    const e = err as Error & { oclif?: { exit?: number }; code?: string }
    // this.exit(n) (EEXIT) and oclif's own errors carry their exit code; anything else reaches bin/run.js's
    // handler, which prints it and exits 1.
    if (e.oclif?.exit !== undefined) code = e.oclif.exit
    else {
      out.stderr += `${e.stack ?? e}\n`
      code = 1
    }
    if (e.code !== 'EEXIT' && e.oclif?.exit !== undefined) out.stderr += `${e.message}\n`
  } finally {
    process.stdout.write = writes.stdout
    process.stderr.write = writes.stderr
    Object.assign(console, consoles)
    process.exitCode = savedExitCode
    if (opts.cwd) process.chdir(savedCwd)
    for (const [k, v] of Object.entries(savedEnv)) {
      if (v === undefined) delete process.env[k]
      else process.env[k] = v
    }
  }
  return { code, ...out }
}
