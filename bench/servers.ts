/**
 * What the parts of `npm run bench` share: the processes it measures (`broker serve`, the bare-Node
 * baseline) and what /proc says of them (children, CPU time, resident memory); the load generator;
 * the record and the load run of each endpoint.
 */
import { type ChildProcess, fork, spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { freePort, waitFor } from '../test/helpers/ports.js'
import { configSchema } from '../src/config/schema.js'
import type { BrokerDeps } from '../src/broker/deps.js'
import type { LoadResult, LoadRun } from './load.js'
import { storeFlow } from '../src/broker/endpoints/store.js'
import { resolveSecrets } from '../src/services/serve/secrets.js'

const ROOT = resolve(import.meta.dirname, '..')

export async function until(check: () => Promise<boolean>, what: string, ms = 20_000): Promise<void> {
  await waitFor(async () => check().catch(() => false), ms, what)
}

export const stopProcess = (p: ChildProcess) =>
  new Promise<void>((r) => {
    if (p.exitCode !== null || p.signalCode !== null) return r()
    p.once('exit', () => r())
    p.kill('SIGTERM')
  })

export interface Target {
  /** baseline: bare node:http + ioredis; floor: the same sealing as the broker must (bench/baseline.ts). */
  name: 'broker' | 'baseline' | 'floor'
  url: string
  proc: ChildProcess
}

export const SECRETS = { session: 'bench-session-secret-0123456789' }

/** `broker serve` on a free port with `workers` workers on the bench's Redis; with `profile`, one worker under --cpu-prof. */
export async function startBroker(redisPort: number, workers: number, profile?: string): Promise<Target> {
  const port = await freePort()
  const env: Record<string, string | undefined> = {
    ...process.env,
    BROKER_SESSION_SECRET: SECRETS.session,
  }
  if (profile && workers === 1) return profiledWorker(redisPort, port, env, profile)
  const proc = spawn(
    process.execPath,
    [
      join(ROOT, 'bin/run.js'),
      'serve',
      '--port',
      String(port),
      '--listen',
      '127.0.0.1',
      '--store',
      'redis',
      '--store-port',
      String(redisPort),
      '--workers',
      String(workers),
      '--expire',
      '600',
      '--log-level',
      'warn',
    ],
    { env, stdio: ['ignore', 'ignore', 'inherit'] },
  )
  const url = `http://127.0.0.1:${port}`
  // Every worker must be up, not just the first: count the primary's children.
  await until(async () => (await fetch(`${url}/ping`)).ok, 'broker /ping')
  await until(async () => workerPids(proc.pid!).length === workers, 'broker workers')
  await new Promise((r) => setTimeout(r, 300))
  return { name: 'broker', url, proc }
}

/**
 * One broker worker run directly under --cpu-prof (Node refuses --cpu-prof in NODE_OPTIONS, and
 * `serve` forks its workers without the primary's flags): the same code a worker of `serve` runs.
 */
async function profiledWorker(
  redisPort: number,
  port: number,
  env: Record<string, string | undefined>,
  profile: string,
): Promise<Target> {
  const config = configSchema.parse({
    port,
    listen: '127.0.0.1',
    workers: 1,
    store: { driver: 'redis', port: redisPort, expire: 600 },
    log: { level: 'warn' },
    session: { secret: env.BROKER_SESSION_SECRET },
  })
  const setup = { config: resolveSecrets(config).config, driver: 'redis', cwd: ROOT }
  const dir = resolve(profile)
  const proc = spawn(
    process.execPath,
    ['--cpu-prof', `--cpu-prof-dir=${dir}`, join(ROOT, 'dist/src/services/serve/worker-main.js')],
    { env, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] },
  )
  // The worker asks for its setup over the IPC channel, as it asks `serve`'s primary.
  proc.on('message', (msg: { type?: string }) => msg?.type === 'setup?' && proc.send({ type: 'setup', setup }))
  const url = `http://127.0.0.1:${port}`
  await until(async () => (await fetch(`${url}/ping`)).ok, 'profiled broker worker /ping')
  return { name: 'broker', url, proc }
}

/**
 * The baseline server: bench/baseline.ts, or the script BENCH_BASELINE names (bench/fastify-floor.ts);
 * `sealed`: `floorScript` (bench/baseline.ts, or bench/flow-floor.ts for whole flows) as the sealed floor,
 * under the bench's session secret.
 */
export async function startBaseline(
  redisPort: number,
  workers: number,
  sealed = false,
  floorScript = 'bench/baseline.ts',
): Promise<Target> {
  const port = await freePort()
  const script = sealed ? floorScript : (process.env.BENCH_BASELINE ?? 'bench/baseline.ts')
  const proc = fork(join(ROOT, script), [], {
    execArgv: ['--import', 'tsx'],
    env: {
      ...process.env,
      PORT: String(port),
      REDIS_PORT: String(redisPort),
      WORKERS: String(workers),
      ...(sealed ? { SEAL_SECRET: SECRETS.session } : {}),
    },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  })
  let ready = 0
  await new Promise<void>((r) => proc.on('message', () => ++ready === 1 && r()))
  const url = `http://127.0.0.1:${port}`
  await until(async () => (await fetch(`${url}/hash-check?hash=x`)).status === 404, 'baseline')
  return { name: sealed ? 'floor' : 'baseline', url, proc }
}

export function workerPids(primary: number): number[] {
  try {
    return readFileSync(`/proc/${primary}/task/${primary}/children`, 'utf8')
      .trim()
      .split(/\s+/)
      .filter(Boolean)
      .map(Number)
  } catch {
    return []
  }
}

/** CPU time (user + system) a process has used, in ms, from /proc (clock ticks of 10 ms). */
export const cpuMs = (pid: number): number => {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
    return (Number(fields[11]) + Number(fields[12])) * 10
  } catch {
    return 0
  }
}
/** A target's processes: the primary and its workers. */
export const pidsOf = (t: Target) => [t.proc.pid!, ...workerPids(t.proc.pid!)]

export const rssMb = (pid: number) =>
  Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024

/** A load generator in its own process (bench/load.ts), so it shares no event loop with what it measures. */
export interface Loader {
  run(run: LoadRun): Promise<LoadResult>
  stop(): void
}

export async function startLoader(): Promise<Loader> {
  const proc = fork(join(ROOT, 'bench/load.ts'), [], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  await new Promise<void>((r) => proc.once('message', () => r()))
  return {
    run: (run) =>
      new Promise<LoadResult>((r) => {
        proc.once('message', (m) => r(m as LoadResult))
        proc.send(run)
      }),
    stop: () => void proc.kill(),
  }
}

export const RECORD = {
  auth_version: '2',
  auth_leg: '3',
  client_id: 'bench-client',
  client_secret: 'bench-secret',
  authorize_url: 'http://127.0.0.1:9/authorize',
  access_url: 'http://127.0.0.1:9/token',
  callback: 'http://localhost:9/cb',
  scope: 'read write',
  state: 'bench-app-state',
}
export const FORM = new URLSearchParams(RECORD).toString()

/**
 * Flows stored by the broker's own /store code, in this process and on the same Redis and secrets
 * (faster than HTTP), so each /start of a run gets its own hash, stored exactly as /store stores it.
 */
export async function seedFlows(deps: BrokerDeps, n: number): Promise<string[]> {
  const hashes: string[] = []
  for (let i = 0; i < n; i += 2000) {
    const batch = await Promise.all(Array.from({ length: Math.min(2000, n - i) }, () => storeFlow(deps, RECORD)))
    hashes.push(...batch.map((b) => b.hash))
  }
  return hashes
}

export type Endpoint = 'POST /store' | 'GET /start' | 'GET /hash-check'

/** The load run of one endpoint: /store and /hash-check for `seconds`, /start once per stored flow (a start URL works once). */
export function loadRun(
  endpoint: Endpoint,
  url: string,
  connections: number,
  seconds: number,
  ctx: { hashCheck: string; starts: string[] },
): LoadRun {
  const base = { url, connections }
  if (endpoint === 'POST /store') return { ...base, method: 'POST', path: '/store', body: FORM, duration: seconds }
  if (endpoint === 'GET /hash-check')
    return { ...base, method: 'GET', path: `/hash-check?hash=${ctx.hashCheck}`, duration: seconds }
  return { ...base, method: 'GET', paths: ctx.starts.map((h) => `/start?hash=${h}`), amount: ctx.starts.length }
}

/**
 * Loads each endpoint on each server for 2 s before anything counts (/start: once over `starts`,
 * which each server may take as its own): the JIT compiles for seconds, the broker has more code to
 * compile than the baseline, and an endpoint first loaded in round 1 would pay for its compiling there.
 */
export async function warmUp(
  load: (run: LoadRun) => Promise<LoadResult>,
  urls: string[],
  endpoints: readonly Endpoint[],
  connections: number,
  ctx: { hashCheck: string; starts: string[] },
  seconds = 2,
): Promise<void> {
  for (const url of urls) for (const e of endpoints) await load(loadRun(e, url, connections, seconds, ctx))
}

export const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2
}

/**
 * An interval that holds the true median of what `xs` were drawn from with probability at least `level`,
 * assuming nothing of their distribution: the k-th smallest and the k-th largest of them, k the largest
 * for which fewer than k of n draws fall below the median with probability at most (1 − level) / 2
 * (a binomial tail, p = ½). Undefined when there are too few rounds for that level.
 */
export function medianInterval(xs: number[], level = 0.9): [number, number] | undefined {
  const n = xs.length
  const s = [...xs].sort((a, b) => a - b)
  // tail: the probability that at most j of n draws fall below the median; choose: n over j.
  let choose = 1
  let tail = 0
  let k = 0
  for (let j = 0; j < n; j++) {
    tail += choose / 2 ** n
    if (tail > (1 - level) / 2) break
    k = j + 1
    choose = (choose * (n - j)) / (j + 1)
  }
  return k >= 1 ? [s[k - 1]!, s[n - k]!] : undefined
}
