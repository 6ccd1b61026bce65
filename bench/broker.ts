/**
 * `npm run bench`: the broker against a bare node:http baseline doing the least the same endpoints
 * must do (bench/baseline.ts), both on one real Redis, measured in this run, alternating rounds
 * (A, B, A, B …) so that drift hits both alike. Load comes from autocannon in its own process.
 *
 *   npm run bench [-- --rounds 3 --seconds 2.5 --connections 50 --flows 200 --profile dir --only start --workers 1]
 *
 * --profile dir: the 1-worker broker runs under --cpu-prof; its profile lands in dir on exit.
 * --only store|start|hash-check (repeatable) and --workers n narrow a run down, to profile one thing.
 *
 * Prints per endpoint and worker count: req/s, p50/p99 latency, the ratio broker ÷ baseline
 * (median of rounds, with its spread), resident memory per worker, the 2-worker ÷ 1-worker
 * throughput ratio, and the broker's own time per step of a whole OAuth 2 3-legged flow.
 */
import { type ChildProcess, fork, spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import { cpus } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { Redis } from 'ioredis'
import { freePort, waitFor } from '../test/helpers/ports.js'
import { startRedis } from '../test/helpers/redis.js'
import { configSchema } from '../src/config/schema.js'
import { resolveSecrets } from '../src/services/serve/secrets.js'
import { createBroker } from '../src/services/broker.js'
import type { BrokerDeps } from '../src/services/deps.js'
import { storeFlow } from '../src/services/flows/store.js'
import { newId } from '../src/oauth/ids.js'
import type { LoadResult, LoadRun } from './load.js'

const ROOT = resolve(import.meta.dirname, '..')
const { values: opts } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '2.5' },
    connections: { type: 'string', default: '50' },
    flows: { type: 'string', default: '200' },
    profile: { type: 'string' },
    only: { type: 'string', multiple: true },
    workers: { type: 'string' },
  },
})
const ROUNDS = Number(opts.rounds)
const SECONDS = Number(opts.seconds)
const CONNECTIONS = Number(opts.connections)
const ALL = cpus().length

const say = (s: string) => process.stderr.write(`${s}\n`)

// ---------------------------------------------------------------- processes

async function until(check: () => Promise<boolean>, what: string, ms = 20_000): Promise<void> {
  await waitFor(async () => check().catch(() => false), ms, what)
}

const stopProcess = (p: ChildProcess) =>
  new Promise<void>((r) => {
    if (p.exitCode !== null || p.signalCode !== null) return r()
    p.once('exit', () => r())
    p.kill('SIGTERM')
  })

interface Target {
  name: 'broker' | 'baseline'
  url: string
  proc: ChildProcess
}

const SECRETS = { cookie: 'bench-cookie-secret-0123456789', session: 'bench-session-secret-0123456789' }

async function startBroker(redisPort: number, workers: number, extraEnv: Record<string, string> = {}): Promise<Target> {
  const port = await freePort()
  const env: Record<string, string | undefined> = { ...process.env, BROKER_COOKIE_SECRET: SECRETS.cookie, BROKER_SESSION_SECRET: SECRETS.session, ...extraEnv }
  if (opts.profile && workers === 1) return profiledWorker(redisPort, port, env)
  const proc = spawn(
    process.execPath,
    [join(ROOT, 'bin/run.js'), 'serve', '--port', String(port), '--listen', '127.0.0.1', '--store', 'redis', '--store-port', String(redisPort), '--workers', String(workers), '--expire', '600', '--log-level', 'warn'],
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
async function profiledWorker(redisPort: number, port: number, env: Record<string, string | undefined>): Promise<Target> {
  const config = configSchema.parse({ port, listen: '127.0.0.1', workers: 1, store: { driver: 'redis', port: redisPort, expire: 600 }, log: { level: 'warn' }, cookie: { secret: env.BROKER_COOKIE_SECRET }, session: { secret: env.BROKER_SESSION_SECRET } })
  const setup = { config: resolveSecrets(config).config, driver: 'redis', cwd: ROOT }
  const dir = resolve(opts.profile!)
  const proc = spawn(process.execPath, ['--cpu-prof', `--cpu-prof-dir=${dir}`, join(ROOT, 'dist/src/services/serve/worker-main.js')], { env: { ...env, BROKER_WORKER_SETUP: JSON.stringify(setup) }, stdio: ['ignore', 'ignore', 'inherit'] })
  const url = `http://127.0.0.1:${port}`
  await until(async () => (await fetch(`${url}/ping`)).ok, 'profiled broker worker /ping')
  return { name: 'broker', url, proc }
}

async function startBaseline(redisPort: number, workers: number): Promise<Target> {
  const port = await freePort()
  const proc = fork(join(ROOT, 'bench/baseline.ts'), [], { execArgv: ['--import', 'tsx'], env: { ...process.env, PORT: String(port), REDIS_PORT: String(redisPort), WORKERS: String(workers) }, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] })
  let ready = 0
  await new Promise<void>((r) => proc.on('message', () => ++ready === 1 && r()))
  const url = `http://127.0.0.1:${port}`
  await until(async () => (await fetch(`${url}/hash-check?hash=x`)).status === 404, 'baseline')
  return { name: 'baseline', url, proc }
}

function workerPids(primary: number): number[] {
  try {
    return readFileSync(`/proc/${primary}/task/${primary}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number)
  } catch {
    return []
  }
}

/** CPU time (user + system) a process has used, in ms, from /proc (clock ticks of 10 ms). */
const cpuMs = (pid: number): number => {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
    return (Number(fields[11]) + Number(fields[12])) * 10
  } catch {
    return 0
  }
}
/** A target's processes: the primary and its workers. */
const pidsOf = (t: Target) => [t.proc.pid!, ...workerPids(t.proc.pid!)]

const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024

// ---------------------------------------------------------------- load

let loader: ChildProcess | undefined
async function startLoader(): Promise<void> {
  loader = fork(join(ROOT, 'bench/load.ts'), [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  await new Promise<void>((r) => loader!.once('message', () => r()))
}
const load = (run: LoadRun) =>
  new Promise<LoadResult>((r) => {
    loader!.once('message', (m) => r(m as LoadResult))
    loader!.send(run)
  })

const RECORD = {
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
const FORM = new URLSearchParams(RECORD).toString()

/**
 * Flows stored by the broker's own /store code, in this process and on the same Redis and secrets
 * (faster than HTTP), so each /start of a run gets its own hash, stored exactly as /store stores it.
 */
async function seedFlows(deps: BrokerDeps, n: number): Promise<string[]> {
  const hashes: string[] = []
  for (let i = 0; i < n; i += 2000) {
    const batch = await Promise.all(Array.from({ length: Math.min(2000, n - i) }, () => storeFlow(deps, RECORD)))
    hashes.push(...batch.map((b) => b.hash))
  }
  return hashes
}

type Endpoint = 'POST /store' | 'GET /start' | 'GET /hash-check'
const ENDPOINTS = (['POST /store', 'GET /start', 'GET /hash-check'] as Endpoint[]).filter((e) => !opts.only || opts.only.some((o) => e.endsWith(`/${o}`)))
const WORKER_COUNTS = opts.workers ? [Number(opts.workers)] : [...new Set([1, ALL])]

interface Sample {
  broker: Measured
  baseline: Measured
}

/** One load run, with the CPU time the server and Redis spent per answered request (µs). */
interface Measured extends LoadResult {
  cpuUs: number
  redisUs: number
}

async function measure(target: Target, endpoint: Endpoint, ctx: { hashCheck: string; starts: string[] }): Promise<Measured> {
  const base = { url: target.url, connections: CONNECTIONS }
  const pids = pidsOf(target)
  const sum = () => pids.reduce((n, pid) => n + cpuMs(pid), 0)
  const [cpu0, redis0] = [sum(), cpuMs(redis.pid)]
  let result: LoadResult
  if (endpoint === 'POST /store') result = await load({ ...base, method: 'POST', path: '/store', body: FORM, duration: SECONDS })
  else if (endpoint === 'GET /hash-check') result = await load({ ...base, method: 'GET', path: `/hash-check?hash=${ctx.hashCheck}`, duration: SECONDS })
  else result = await load({ ...base, method: 'GET', paths: ctx.starts.map((h) => `/start?hash=${h}`), amount: ctx.starts.length })
  const per = (ms: number) => (ms * 1000) / Math.max(1, result.requests)
  return { ...result, cpuUs: per(sum() - cpu0), redisUs: per(cpuMs(redis.pid) - redis0) }
}

// ---------------------------------------------------------------- report

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2
}
const f = (n: number, d = 0) => n.toFixed(d)

function report(workers: number, samples: Record<Endpoint, Sample[]>): Record<Endpoint, number> {
  const rows: string[] = []
  const brokerRps = {} as Record<Endpoint, number>
  for (const e of ENDPOINTS) {
    const s = samples[e]
    const ratios = s.map((x) => x.broker.rps / x.baseline.rps)
    const p99 = s.map((x) => x.broker.p99 / Math.max(1, x.baseline.p99))
    brokerRps[e] = median(s.map((x) => x.broker.rps))
    const bad = s.reduce((n, x) => n + x.broker.bad + x.baseline.bad, 0)
    const ok = median(ratios) >= 0.85 && median(p99) <= 2 ? 'ok' : 'MISS'
    rows.push(
      `  ${e.padEnd(16)} ${f(brokerRps[e]).padStart(7)} ${f(median(s.map((x) => x.baseline.rps))).padStart(8)}   ${f(median(ratios), 2)} (${f(Math.min(...ratios), 2)}–${f(Math.max(...ratios), 2)})   ${f(median(s.map((x) => x.broker.p50)))}/${f(median(s.map((x) => x.broker.p99)))} ms`.padEnd(82) +
        `${f(median(s.map((x) => x.baseline.p50)))}/${f(median(s.map((x) => x.baseline.p99)))} ms`.padEnd(14) +
        `${f(median(p99), 2)}  ${ok}${bad ? `  (${bad} non-2xx/3xx)` : ''}`,
    )
  }
  console.log(`\n${workers} worker${workers > 1 ? 's' : ''} (${ROUNDS} rounds, ${CONNECTIONS} connections, ${SECONDS} s per run; /start: one request per stored flow)`)
  console.log(`  ${'endpoint'.padEnd(16)} ${'broker'.padStart(7)} ${'baseline'.padStart(8)}   ratio (spread)     broker p50/p99`.padEnd(82) + 'baseline p50/p99'.padEnd(14) + '  p99 ratio')
  for (const r of rows) console.log(r)
  // Where the time goes: on a machine whose CPUs the servers share with Redis and the load
  // generator, throughput follows CPU per request more than anything else.
  console.log(`  CPU per request, µs (median):      broker  baseline   Redis under broker  Redis under baseline`)
  for (const e of ENDPOINTS) {
    const m = (pick: (x: Sample) => number) => f(median(samples[e].map(pick))).padStart(8)
    console.log(`  ${e.padEnd(32)} ${m((x) => x.broker.cpuUs)}  ${m((x) => x.baseline.cpuUs)}   ${m((x) => x.broker.redisUs)}            ${m((x) => x.baseline.redisUs)}`)
  }
  return brokerRps
}

// ---------------------------------------------------------------- the OAuth 2 flow, step by step

async function flowSteps(redisPort: number, n: number): Promise<void> {
  // A local provider that answers at once and times its own work, and an app that takes the result.
  let providerMs = 0
  const provider: Server = createServer((req, res) => {
    const t0 = process.hrtime.bigint()
    const url = new URL(req.url!, 'http://x')
    if (url.pathname === '/authorize') {
      const back = new URL(url.searchParams.get('redirect_uri')!)
      back.searchParams.set('code', newId())
      back.searchParams.set('state', url.searchParams.get('state')!)
      res.writeHead(302, { location: back.toString() }).end()
      return
    }
    req.resume()
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ access_token: newId(), refresh_token: newId(), token_type: 'Bearer', expires_in: 3600 }))
      providerMs += Number(process.hrtime.bigint() - t0) / 1e6
    })
  })
  const app: Server = createServer((_req, res) => res.end('ok'))
  await Promise.all([new Promise<void>((r) => provider.listen(0, '127.0.0.1', () => r())), new Promise<void>((r) => app.listen(0, '127.0.0.1', () => r()))])
  const pPort = (provider.address() as { port: number }).port
  const aPort = (app.address() as { port: number }).port
  const broker = await startBroker(redisPort, 1)
  const record = { ...RECORD, authorize_url: `http://127.0.0.1:${pPort}/authorize`, access_url: `http://127.0.0.1:${pPort}/token`, callback: `http://localhost:${aPort}/cb` }
  const steps: Record<string, number[]> = { 'POST /store': [], 'GET /start → 302': [], 'GET /callback (token exchange) → 302': [], '  of which the provider': [] }
  const time = async <T>(fn: () => Promise<T>): Promise<[T, number]> => {
    const t0 = performance.now()
    const v = await fn()
    return [v, performance.now() - t0]
  }
  for (let i = 0; i < n; i++) {
    const [stored, tStore] = await time(async () => (await (await fetch(`${broker.url}/store`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(record).toString() })).json()) as { hash: string })
    const [start, tStart] = await time(() => fetch(`${broker.url}/start?hash=${stored.hash}`, { redirect: 'manual' }))
    const cookie = start.headers.getSetCookie()[0]!.split(';')[0]!
    const authorize = await fetch(start.headers.get('location')!, { redirect: 'manual' })
    const callback = new URL(authorize.headers.get('location')!)
    const before = providerMs
    const [done, tCallback] = await time(() => fetch(`${broker.url}${callback.pathname}${callback.search}`, { redirect: 'manual', headers: { cookie } }))
    if (done.status !== 302 || !done.headers.get('location')?.includes('access_token=')) throw new Error(`the flow did not deliver a token (${done.status})`)
    if (i < Math.min(20, n / 5)) continue // warm-up
    steps['POST /store']!.push(tStore)
    steps['GET /start → 302']!.push(tStart)
    steps['GET /callback (token exchange) → 302']!.push(tCallback)
    steps['  of which the provider']!.push(providerMs - before)
  }
  await stopProcess(broker.proc)
  provider.close()
  app.close()
  const p = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))]!
  console.log(`\nOAuth 2 3-legged flow, one at a time (${n} flows, 1 worker; time seen by the client on loopback, ms)`)
  console.log(`  ${'step'.padEnd(40)} ${'p50'.padStart(6)} ${'p99'.padStart(6)}`)
  for (const [step, xs] of Object.entries(steps)) console.log(`  ${step.padEnd(40)} ${f(p(xs, 0.5), 2).padStart(6)} ${f(p(xs, 0.99), 2).padStart(6)}`)
  const own = steps['GET /callback (token exchange) → 302']!.map((t, i) => t - steps['  of which the provider']![i]!)
  console.log(`  ${'broker time per flow (3 steps, no provider)'.padEnd(40)} ${f(p(steps['POST /store']!, 0.5) + p(steps['GET /start → 302']!, 0.5) + p(own, 0.5), 2).padStart(6)}`)
}

// ---------------------------------------------------------------- main

const started = Date.now()
const redis = await startRedis()
const client = new Redis({ port: redis.port })
const seeder = await createBroker(
  resolveSecrets(configSchema.parse({ store: { driver: 'redis', port: redis.port, expire: 600 }, log: { level: 'silent' }, cookie: { secret: SECRETS.cookie }, session: { secret: SECRETS.session } })).config,
  'redis',
  { redis: client },
)
await startLoader()
say(`bench: Redis on ${redis.port}; ${ALL} CPUs; node ${process.version}`)

const rpsByWorkers: Record<number, Record<Endpoint, number>> = {}
const rssByWorkers: Record<number, number[]> = {}
try {
  for (const workers of WORKER_COUNTS) {
    const [broker, baseline] = await Promise.all([startBroker(redis.port, workers), startBaseline(redis.port, workers)])
    const hashCheck = (await seedFlows(seeder, 1))[0]!
    await client.set(`base:flow:{${hashCheck}}`, JSON.stringify({ hash: hashCheck, record: RECORD, progress: 'stored' }), 'EX', 600)
    // Warm both up (JIT, connections) before anything counts.
    for (const t of [broker, baseline]) await load({ url: t.url, connections: CONNECTIONS, method: 'POST', path: '/store', body: FORM, duration: 1 })
    const samples = Object.fromEntries(ENDPOINTS.map((e) => [e, [] as Sample[]])) as Record<Endpoint, Sample[]>
    for (let round = 0; round < ROUNDS; round++) {
      for (const e of ENDPOINTS) {
        // /start needs one stored flow per request: as many as the /store run of this round managed.
        const count = e === 'GET /start' ? Math.max(2000, Math.round((samples['POST /store']?.at(-1)?.broker.rps ?? 4000) * SECONDS)) : 0
        const ctx = { hashCheck, starts: count ? await seedFlows(seeder, count) : [] }
        // A, B in this round; B, A in the next, so neither always runs on a warmer machine.
        const order = round % 2 ? [baseline, broker] : [broker, baseline]
        const got: Partial<Sample> = {}
        for (const t of order) got[t.name] = await measure(t, e, ctx)
        samples[e].push(got as Sample)
        say(`  ${workers}w round ${round + 1} ${e}: broker ${f(got.broker!.rps)} req/s, baseline ${f(got.baseline!.rps)} req/s`)
      }
    }
    rpsByWorkers[workers] = report(workers, samples)
    rssByWorkers[workers] = (opts.profile && workers === 1 ? [broker.proc.pid!] : workerPids(broker.proc.pid!)).map(rssMb)
    await Promise.all([stopProcess(broker.proc), stopProcess(baseline.proc)])
  }
  console.log(`\nResident memory per broker worker after the runs: ${Object.entries(rssByWorkers).map(([w, mbs]) => `${w} worker${Number(w) > 1 ? 's' : ''}: ${mbs.map((m) => `${f(m)} MB`).join(', ')}`).join('; ')}`)
  if (ALL > 1 && rpsByWorkers[1] && rpsByWorkers[ALL]) {
    console.log(`${ALL} workers ÷ 1 worker, broker throughput: ${ENDPOINTS.map((e) => `${e} ${f(rpsByWorkers[ALL]![e] / rpsByWorkers[1]![e], 2)}`).join(', ')} (${ALL} CPUs shared with Redis and the load generator)`)
  }
  if (!opts.only && !opts.workers) await flowSteps(redis.port, Number(opts.flows))
} finally {
  loader?.kill()
  await seeder.close()
  client.disconnect()
  await redis.stop()
}
say(`\nbench: done in ${f((Date.now() - started) / 1000)} s${opts.profile ? `; CPU profiles in ${opts.profile}` : ''}`)
