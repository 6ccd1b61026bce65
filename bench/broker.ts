/**
 * `npm run bench`: the broker against a bare node:http baseline doing the least the same endpoints
 * must do (bench/baseline.ts), both on one real Redis, measured in this run, alternating rounds
 * (A, B, A, B …) so that drift hits both alike. Load comes from autocannon in its own process.
 *
 *   npm run bench [-- --rounds 3 --seconds 2.5 --connections 50 --flows 200 --profile dir --only start --workers 1]
 *                 [--users 50 --flow-seconds 2 --flow-rounds 15 --warm-flows 4000 --warm-seconds 6]
 *
 * --profile dir: the 1-worker broker runs under --cpu-prof; its profile lands in dir on exit.
 * --only store|start|hash-check (repeatable) and --workers n narrow a run down, to profile one thing.
 *
 * Prints per endpoint and worker count: req/s, p50/p99 latency, the ratio broker ÷ baseline
 * (median of rounds, with its spread), CPU time per request (server and Redis), resident memory
 * per worker, the 2-worker ÷ 1-worker throughput ratio, two instances ÷ one on the same Redis
 * (bench/instances.ts), and the broker's own time per step of a whole OAuth 2 3-legged flow
 * (bench/flow-steps.ts).
 */
import { cpus } from 'node:os'
import { parseArgs } from 'node:util'
import { Redis } from 'ioredis'
import { startRedis } from '../test/helpers/redis.js'
import { configSchema } from '../src/config/schema.js'
import { resolveSecrets } from '../src/services/serve/secrets.js'
import { createBroker } from '../src/broker/index.js'
import { flowSteps } from './flow-steps.js'
import { bare, sealedKeeping } from './keeping.js'
import { instancesRun } from './instances.js'
import { wholeFlow } from './whole-flow.js'
import type { LoadResult, LoadRun } from './load.js'
import {
  type Endpoint,
  RECORD,
  SECRETS,
  type Target,
  loadRun,
  median,
  cpuMs,
  pidsOf,
  rssMb,
  seedFlows,
  startBaseline,
  startBroker,
  startLoader,
  stopProcess,
  warmUp,
  workerPids,
} from './servers.js'

const { values: opts } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '2.5' },
    connections: { type: 'string', default: '50' },
    flows: { type: 'string', default: '200' },
    profile: { type: 'string' },
    only: { type: 'string', multiple: true },
    workers: { type: 'string' },
    users: { type: 'string', default: '50' },
    // Whole flows vary more from round to round (a round's ratio ±10%, two workers sharing two CPUs with
    // Redis and the load generator) than one endpoint does. Rounds of 2 s varied no more than rounds of 4 s
    // (30 pairs: sd 0.096 against 0.13), so fifteen of 2 s: the median's interval about half as wide as
    // seven of 4 s gave, in the same time.
    'flow-seconds': { type: 'string', default: '2' },
    'flow-rounds': { type: 'string', default: '15' },
    'warm-flows': { type: 'string', default: '4000' },
    // Each server, endpoint by endpoint, before the rounds: with 2 s the broker's two workers were still getting
    // faster over the rounds that followed (/store 4268 → 7117 req/s over five rounds, the floor flat), so its
    // first round measured the JIT, not the broker. 6 s for each of the three servers.
    'warm-seconds': { type: 'string', default: '6' },
  },
})
const ROUNDS = Number(opts.rounds)
const SECONDS = Number(opts.seconds)
const CONNECTIONS = Number(opts.connections)
const ALL = cpus().length

const say = (s: string) => process.stderr.write(`${s}\n`)

// ---------------------------------------------------------------- load

const ENDPOINTS = (['POST /store', 'GET /start', 'GET /hash-check'] as Endpoint[]).filter(
  (e) => !opts.only || opts.only.some((o) => e.endsWith(`/${o}`)),
)
// --only flow: the whole-flow section alone (bench/whole-flow.ts).
const WHOLE_FLOW = !opts.only || opts.only.includes('flow')
const WORKER_COUNTS = opts.workers ? [Number(opts.workers)] : [...new Set([1, ALL])]

/** One round of an endpoint: each server's run (bench/baseline.ts bare and as the sealed floor). */
type Sample = Record<Target['name'], Measured>

/** One load run, with the CPU time the server and Redis spent per answered request (µs). */
interface Measured extends LoadResult {
  cpuUs: number
  redisUs: number
}

async function measure(
  target: Target,
  endpoint: Endpoint,
  ctx: { hashCheck: string; starts: string[] },
): Promise<Measured> {
  const pids = pidsOf(target)
  const sum = () => pids.reduce((n, pid) => n + cpuMs(pid), 0)
  const [cpu0, redis0] = [sum(), cpuMs(redis.pid)]
  const result = await load(loadRun(endpoint, target.url, CONNECTIONS, SECONDS, ctx))
  const per = (ms: number) => (ms * 1000) / Math.max(1, result.requests)
  return { ...result, cpuUs: per(sum() - cpu0), redisUs: per(cpuMs(redis.pid) - redis0) }
}

// ---------------------------------------------------------------- report

const f = (n: number, d = 0) => n.toFixed(d)

function report(workers: number, samples: Record<Endpoint, Sample[]>): Record<Endpoint, number> {
  const rows: string[] = []
  const brokerRps = {} as Record<Endpoint, number>
  const at = (e: Endpoint, side: Target['name'], key: keyof Measured) => median(samples[e].map((x) => x[side][key]))
  /** Median of the per-round ratios a ÷ b of req/s, with their spread. */
  const ratio = (e: Endpoint, a: Target['name'], b: Target['name']) => {
    const rs = samples[e].map((x) => x[a].rps / x[b].rps)
    return { median: median(rs), text: `${f(median(rs), 2)} (${f(Math.min(...rs), 2)}–${f(Math.max(...rs), 2)})` }
  }
  for (const e of ENDPOINTS) {
    const s = samples[e]
    brokerRps[e] = at(e, 'broker', 'rps')
    const p99 = median(s.map((x) => x.broker.p99 / Math.max(1, x.baseline.p99)))
    const bad = s.reduce((n, x) => n + x.broker.bad + x.baseline.bad + x.floor.bad, 0)
    const [vsBase, floor, vsFloor] = [
      ratio(e, 'broker', 'baseline'),
      ratio(e, 'floor', 'baseline'),
      ratio(e, 'broker', 'floor'),
    ]
    const verdict = (r: number) => (r >= 0.95 && p99 <= 2 ? 'ok' : 'MISS')
    const rps = (['broker', 'baseline', 'floor'] as const).map((t) =>
      f(at(e, t, 'rps')).padStart(t === 'broker' ? 7 : 8),
    )
    const lat = (t: Target['name']) => `${f(at(e, t, 'p50'))}/${f(at(e, t, 'p99'))}`
    rows.push(
      `  ${e.padEnd(16)}${rps.join('')}   ${vsBase.text} ${verdict(vsBase.median).padEnd(4)}  ${floor.text}   ${vsFloor.text} ${verdict(vsFloor.median).padEnd(4)}  ${`${lat('broker')} ${lat('baseline')} ${lat('floor')}`.padEnd(17)} ${f(p99, 2)}${bad ? `  (${bad} non-2xx/3xx)` : ''}`,
    )
  }
  console.log(
    `\n${workers} worker${workers > 1 ? 's' : ''} (${ROUNDS} rounds, ${CONNECTIONS} connections, ${SECONDS} s per run; /start: one request per stored flow)`,
  )
  console.log(
    `  ${'endpoint'.padEnd(16)} broker baseline   floor   broker÷baseline        floor÷baseline     broker÷floor           p50/p99 ms b/base/floor  p99 ratio`,
  )
  for (const r of rows) console.log(r)
  // Where the time goes: on a machine whose CPUs the servers share with Redis and the load
  // generator, throughput follows CPU per request more than anything else.
  console.log(`  CPU per request, µs (median):   broker  baseline  floor   Redis under each`)
  for (const e of ENDPOINTS) {
    const m = (side: Target['name'], key: 'cpuUs' | 'redisUs') => f(at(e, side, key)).padStart(7)
    console.log(
      `  ${e.padEnd(29)} ${m('broker', 'cpuUs')} ${m('baseline', 'cpuUs')}${m('floor', 'cpuUs')}   ${m('broker', 'redisUs')}${m('baseline', 'redisUs')}${m('floor', 'redisUs')}`,
    )
  }
  return brokerRps
}

// ---------------------------------------------------------------- main

const started = Date.now()
const redis = await startRedis()
const client = new Redis({ port: redis.port })
const seeder = await createBroker(
  resolveSecrets(
    configSchema.parse({
      store: { driver: 'redis', port: redis.port, expire: 600 },
      log: { level: 'silent' },
      session: { secret: SECRETS.session },
    }),
  ).config,
  'redis',
  { redis: client },
)
const loader = await startLoader()
const load = (run: LoadRun) => loader.run(run)
say(`bench: Redis on ${redis.port}; ${ALL} CPUs; node ${process.version}`)

const rpsByWorkers: Record<number, Record<Endpoint, number>> = {}
const rssByWorkers: Record<number, number[]> = {}
try {
  for (const workers of ENDPOINTS.length ? WORKER_COUNTS : []) {
    const [broker, baseline, floor] = await Promise.all([
      startBroker(redis.port, workers, opts.profile),
      startBaseline(redis.port, workers),
      startBaseline(redis.port, workers, true),
    ])
    const hashCheck = (await seedFlows(seeder, 1))[0]!
    const text = JSON.stringify({ hash: hashCheck, record: RECORD, progress: 'stored' })
    for (const keeping of [bare, sealedKeeping(SECRETS.session)])
      await client.set(...keeping.put('flow', hashCheck, text), 'EX', 600)
    // The baseline takes any hash at /start: both may use the same flows.
    await warmUp(
      load,
      [broker.url, baseline.url, floor.url],
      ENDPOINTS,
      CONNECTIONS,
      {
        hashCheck,
        starts: ENDPOINTS.includes('GET /start') ? await seedFlows(seeder, 4000) : [],
      },
      Number(opts['warm-seconds']),
    )
    const samples = Object.fromEntries(ENDPOINTS.map((e) => [e, [] as Sample[]])) as Record<Endpoint, Sample[]>
    for (let round = 0; round < ROUNDS; round++) {
      for (const e of ENDPOINTS) {
        // /start needs one stored flow per request: as many as the /store run of this round managed.
        const count =
          e === 'GET /start'
            ? Math.max(2000, Math.round((samples['POST /store']?.at(-1)?.broker.rps ?? 4000) * SECONDS))
            : 0
        const ctx = { hashCheck, starts: count ? await seedFlows(seeder, count) : [] }
        // Each round starts with the next server (A B C, B C A, C A B …), so none always runs on a warmer machine.
        const servers = [broker, baseline, floor]
        const order = servers.map((_, i) => servers[(i + round) % servers.length]!)
        const got: Partial<Sample> = {}
        for (const t of order) got[t.name] = await measure(t, e, ctx)
        samples[e].push(got as Sample)
        say(
          `  ${workers}w round ${round + 1} ${e}: broker ${f(got.broker!.rps)} req/s, baseline ${f(got.baseline!.rps)}, floor ${f(got.floor!.rps)}`,
        )
      }
    }
    rpsByWorkers[workers] = report(workers, samples)
    rssByWorkers[workers] = (opts.profile && workers === 1 ? [broker.proc.pid!] : workerPids(broker.proc.pid!)).map(
      rssMb,
    )
    await Promise.all([broker, baseline, floor].map((t) => stopProcess(t.proc)))
  }
  if (ENDPOINTS.length)
    console.log(
      `\nResident memory per broker worker after the runs: ${Object.entries(rssByWorkers)
        .map(([w, mbs]) => `${w} worker${Number(w) > 1 ? 's' : ''}: ${mbs.map((m) => `${f(m)} MB`).join(', ')}`)
        .join('; ')}`,
    )
  if (ALL > 1 && rpsByWorkers[1] && rpsByWorkers[ALL]) {
    const gains = ENDPOINTS.map((e) => `${e} ${f(rpsByWorkers[ALL]![e] / rpsByWorkers[1]![e], 2)}`)
    console.log(
      `${ALL} workers ÷ 1 worker, broker throughput: ${gains.join(', ')} (${ALL} CPUs shared with Redis and the load generator)`,
    )
  }
  if (ENDPOINTS.length && !opts.workers && !opts.profile && ALL > 1) {
    const hashCheck = (await seedFlows(seeder, 1))[0]!
    await instancesRun({
      redisPort: redis.port,
      endpoints: ENDPOINTS,
      rounds: ROUNDS,
      seconds: SECONDS,
      connections: CONNECTIONS,
      seed: (n) => seedFlows(seeder, n),
      hashCheck,
      loader,
    })
  }
  if (WHOLE_FLOW)
    await wholeFlow({
      redisPort: redis.port,
      redisPid: () => redis.pid,
      workerCounts: WORKER_COUNTS,
      rounds: Number(opts['flow-rounds']),
      seconds: Number(opts['flow-seconds']),
      users: Number(opts.users),
      warmFlows: Number(opts['warm-flows']),
      profile: opts.profile,
    })
  if (!opts.only && !opts.workers) await flowSteps(redis.port, Number(opts.flows))
} finally {
  loader.stop()
  await seeder.close()
  client.disconnect()
  await redis.stop()
}
say(`\nbench: done in ${f((Date.now() - started) / 1000)} s${opts.profile ? `; CPU profiles in ${opts.profile}` : ''}`)
