/**
 * Two broker builds against each other (A, B, A, B … on one Redis, autocannon in its own process):
 * to see whether a change to the broker pays, at a resolution `npm run bench`'s ratio against the
 * baseline cannot give (two broker runs differ far less than a broker run and a baseline run).
 *
 *   git worktree add /tmp/before HEAD~1 && (cd /tmp/before && npm ci && npm run build)
 *   npm run build && node --import tsx bench/versus.ts --a /tmp/before --b . [--only store] [--workers 2] [--rounds 10] [--seconds 3]
 *
 * Each build is a folder with bin/run.js and its built dist/. Prints, per endpoint, each build's
 * median req/s and worker CPU per request, every round's B ÷ A, and the median of those.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { freePort } from '../test/helpers/ports.js'
import { startRedis } from '../test/helpers/redis.js'
import type { LoadResult } from './load.js'
import {
  type Endpoint,
  FORM,
  SECRETS,
  cpuMs,
  loadRun,
  median,
  startLoader,
  stopProcess,
  workerPids,
} from './servers.js'

const { values: opts } = parseArgs({
  options: {
    a: { type: 'string' },
    b: { type: 'string', default: '.' },
    only: { type: 'string', multiple: true },
    workers: { type: 'string', default: '1' },
    rounds: { type: 'string', default: '10' },
    seconds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '50' },
  },
})
if (!opts.a) {
  process.stderr.write('bench/versus.ts: --a <folder of the other build> is required (see the comment at the top)\n')
  process.exit(2)
}
const WORKERS = Number(opts.workers)
const ROUNDS = Number(opts.rounds)
const SECONDS = Number(opts.seconds)
const CONNECTIONS = Number(opts.connections)
const ENDPOINTS = (['POST /store', 'GET /start', 'GET /hash-check'] as Endpoint[]).filter(
  (e) => !opts.only || opts.only.some((o) => e.endsWith(`/${o}`)),
)
const say = (s: string) => process.stderr.write(`${s}\n`)

interface Build {
  name: 'A' | 'B'
  url: string
  proc: ChildProcess
}

async function start(name: Build['name'], root: string, redisPort: number): Promise<Build> {
  const port = await freePort()
  const args = [
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
    String(WORKERS),
    '--expire',
    '600',
    '--log-level',
    'warn',
  ]
  const proc = spawn(process.execPath, [resolve(root, 'bin/run.js'), ...args], {
    env: { ...process.env, BROKER_SESSION_SECRET: SECRETS.session },
    stdio: ['ignore', 'ignore', 'inherit'],
  })
  const url = `http://127.0.0.1:${port}`
  for (let i = 0; ; i++) {
    if (i === 150) throw new Error(`build ${name} (${root}) did not start`)
    const up = await fetch(`${url}/ping`).then(
      (r) => r.ok,
      () => false,
    )
    if (up && workerPids(proc.pid!).length === WORKERS) break
    await new Promise((r) => setTimeout(r, 100))
  }
  return { name, url, proc }
}

/** `n` flows stored through a build's own /store, 50 at a time. */
async function store(build: Build, n: number): Promise<string[]> {
  const hashes: string[] = []
  const one = async () => {
    const res = await fetch(`${build.url}/store`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: FORM,
    })
    hashes.push(((await res.json()) as { hash: string }).hash)
  }
  for (let i = 0; i < n; i += 50) await Promise.all(Array.from({ length: Math.min(50, n - i) }, one))
  return hashes
}

const redis = await startRedis()
const loader = await startLoader()
const builds: Build[] = []
try {
  builds.push(await start('A', opts.a, redis.port), await start('B', opts.b!, redis.port))
  say(`versus: A ${resolve(opts.a)}, B ${resolve(opts.b!)}; ${WORKERS} worker(s), ${ROUNDS} rounds × ${SECONDS} s`)
  const hashCheck = Object.fromEntries(await Promise.all(builds.map(async (b) => [b.name, (await store(b, 1))[0]!])))
  for (const b of builds) await loader.run(loadRun('POST /store', b.url, CONNECTIONS, 1, { hashCheck: '', starts: [] }))
  for (const e of ENDPOINTS) {
    const got: Record<Build['name'], { rps: number[]; cpuUs: number[] }> = {
      A: { rps: [], cpuUs: [] },
      B: { rps: [], cpuUs: [] },
    }
    for (let round = 0; round < ROUNDS; round++) {
      for (const b of round % 2 ? [...builds].reverse() : builds) {
        // /start: one stored flow per request, as many as a run of this length takes.
        const starts =
          e === 'GET /start'
            ? await store(b, Math.round(Math.max(2000, (median(got[b.name].rps) || 5000) * SECONDS)))
            : []
        const workers = workerPids(b.proc.pid!)
        const cpu0 = workers.reduce((n, w) => n + cpuMs(w), 0)
        const res: LoadResult = await loader.run(
          loadRun(e, b.url, CONNECTIONS, SECONDS, { hashCheck: hashCheck[b.name]!, starts }),
        )
        got[b.name].rps.push(res.rps)
        got[b.name].cpuUs.push(((workers.reduce((n, w) => n + cpuMs(w), 0) - cpu0) * 1000) / Math.max(1, res.requests))
      }
    }
    const ratios = got.B.rps.map((x, i) => x / got.A.rps[i]!)
    console.log(`${e}: B ÷ A req/s ${median(ratios).toFixed(3)} (rounds: ${ratios.map((r) => r.toFixed(2)).join(' ')})`)
    for (const n of ['A', 'B'] as const)
      console.log(
        `  ${n}: ${Math.round(median(got[n].rps))} req/s, ${median(got[n].cpuUs).toFixed(0)} µs worker CPU per request`,
      )
  }
} finally {
  loader.stop()
  await Promise.all(builds.map((b) => stopProcess(b.proc)))
  await redis.stop()
}
