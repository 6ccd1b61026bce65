/**
 * The whole-flow part of `npm run bench`: complete OAuth 2 three-legged flows per second under
 * `users` concurrent users (bench/flow-load.ts), `broker serve` against the sealed floor of a flow
 * (bench/flow-floor.ts), both on the bench's Redis and this process's token endpoint and app, with 1
 * and with all workers; rounds alternate which server goes first. Prints flows/s, the ratio
 * broker ÷ floor (median of the rounds, their spread), latency per flow and CPU per flow.
 */
import { fork } from 'node:child_process'
import { createServer, type Server } from 'node:http'
import { join, resolve } from 'node:path'
import { newId } from '../src/broker/ids.js'
import type { FlowResult, FlowRun } from './flow-load.js'
import {
  RECORD,
  type Target,
  cpuMs,
  median,
  medianInterval,
  pidsOf,
  rssMb,
  startBaseline,
  startBroker,
  stopProcess,
  workerPids,
} from './servers.js'

const ROOT = resolve(import.meta.dirname, '..')
/** How long a broker is left alone before its idle memory is read. */
const IDLE_MS = 30_000
const f = (n: number, d = 0) => n.toFixed(d)
const say = (s: string) => process.stderr.write(`${s}\n`)

interface Options {
  redisPort: number
  redisPid: () => number
  workerCounts: number[]
  rounds: number
  seconds: number
  users: number
  /** Flows each worker of each server runs before the counted rounds (at least 2 s, at most 20 s a worker). */
  warmFlows: number
  /** A directory: the 1-worker broker runs under --cpu-prof. */
  profile?: string
}

/** A token endpoint that answers at once and an app that takes the delivery, in this process (idle during runs). */
export async function startProvider(): Promise<{ token: string; app: string; close(): void }> {
  const tokens: Server = createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      const body = JSON.stringify({
        access_token: newId(),
        refresh_token: newId(),
        token_type: 'Bearer',
        expires_in: 3600,
      })
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body)
    })
  })
  const app: Server = createServer((_req, res) => res.writeHead(200, { 'content-length': 2 }).end('ok'))
  const listen = (s: Server) =>
    new Promise<number>((r) => s.listen(0, '127.0.0.1', () => r((s.address() as { port: number }).port)))
  const [tp, ap] = await Promise.all([listen(tokens), listen(app)])
  return {
    token: `http://127.0.0.1:${tp}/token`,
    app: `http://localhost:${ap}/cb`,
    close: () => {
      tokens.closeAllConnections()
      app.closeAllConnections()
      tokens.close()
      app.close()
    },
  }
}

interface Measured extends FlowResult {
  /** CPU per flow, µs: the server's processes, and Redis. */
  cpuUs: number
  redisUs: number
  /** Each worker's share of the workers' CPU time, %, busiest first: how evenly they shared the load. */
  split: number[]
  /** Each worker's share of the workers' CPU time, 0–1, in worker order. */
  shares: number[]
  /** CPU per flow, µs, of the load generator and of this process (token endpoint and app). */
  loadUs: number
  provUs: number
}

/** Runs the whole-flow comparison and prints its table. */
export async function wholeFlow(o: Options): Promise<void> {
  const provider = await startProvider()
  const loader = fork(join(ROOT, 'bench/flow-load.ts'), [], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  await new Promise<void>((r) => loader.once('message', () => r()))
  const load = (run: FlowRun) =>
    new Promise<FlowResult>((r) => {
      loader.once('message', (m) => r(m as FlowResult))
      loader.send(run)
    })
  const form = new URLSearchParams({ ...RECORD, access_url: provider.token, callback: provider.app }).toString()
  const measure = async (t: Target, seconds: number): Promise<Measured> => {
    const pids = pidsOf(t)
    const workers = workerPids(t.proc.pid!)
    const cpu = () => pids.reduce((n, pid) => n + cpuMs(pid), 0)
    const [c0, r0, w0] = [cpu(), cpuMs(o.redisPid()), workers.map(cpuMs)]
    const [l0, p0] = [cpuMs(loader.pid!), process.cpuUsage()]
    const result = await load({ url: t.url, form, users: o.users, seconds })
    if (result.firstError) say(`    ${t.name}: ${result.bad} flows failed; first: ${result.firstError}`)
    const per = (ms: number) => (ms * 1000) / Math.max(1, result.flows)
    const pu = process.cpuUsage(p0)
    const side = { loadUs: per(cpuMs(loader.pid!) - l0), provUs: per((pu.user + pu.system) / 1000) }
    const used = workers.map((pid, i) => cpuMs(pid) - w0[i]!)
    const all = used.reduce((a, b) => a + b, 0)
    const shares = used.map((ms) => ms / Math.max(1, all))
    const split = shares.map((s) => 100 * s).sort((a, b) => b - a)
    return { ...result, cpuUs: per(cpu() - c0), redisUs: per(cpuMs(o.redisPid()) - r0), split, shares, ...side }
  }
  try {
    const rows: string[] = []
    const memory: string[] = []
    const splits: string[] = []
    const intervals: string[] = []
    for (const workers of o.workerCounts) {
      const [broker, floor] = await Promise.all([
        startBroker(o.redisPort, workers, o.profile),
        startBaseline(o.redisPort, workers, true, 'bench/flow-floor.ts'),
      ])
      // Resident memory of `serve`'s processes, idle once started (a profiled worker runs alone: no primary).
      const workersOf = (t: Target) => (o.profile && workers === 1 ? [t.proc.pid!] : workerPids(t.proc.pid!))
      const started = {
        primary: o.profile && workers === 1 ? undefined : rssMb(broker.proc.pid!),
        workers: workersOf(broker).map(rssMb),
      }
      // Right after start a worker still holds the young generation V8 grew while loading its modules;
      // V8's memory reducer gives it back once the process has idled about 10 s (docs/decisions/0012).
      // What an idle worker holds is read after IDLE_MS with nothing to do (worker.ts collects at 5 s, which arms
      // the reducer for about 8 s later).
      await new Promise((r) => setTimeout(r, IDLE_MS))
      const idle = {
        primary: o.profile && workers === 1 ? undefined : rssMb(broker.proc.pid!),
        workers: workersOf(broker).map(rssMb),
      }
      // The JIT compiles for thousands of flows, and the broker has more to compile: neither pays for it in a
      // counted round. Warmed by flows, not seconds: on a busy machine 2 s were a few hundred flows, and the
      // broker's first counted round then spent up to twice the CPU per flow of its later ones.
      // Each worker compiles its own code: the warm-up is per worker. With SCHED_NONE one worker may take
      // nearly every connection for a while, so the other would meet its first thousands of flows in a counted
      // round (its CPU per flow there up to a fifth higher): warm until each worker has run its share, as
      // estimated from its part of the workers' CPU time.
      for (const t of [broker, floor]) {
        const warmed = new Array<number>(workers).fill(0)
        for (let run = 0; run < 12 * workers && Math.min(...warmed) < o.warmFlows; run++) {
          const m = await measure(t, 2)
          // A server of one process has no workers to share among.
          const shares = m.shares.length === workers ? m.shares : new Array<number>(workers).fill(1 / workers)
          shares.forEach((share, i) => (warmed[i]! += share * m.flows))
        }
      }
      const samples: Array<Record<'broker' | 'floor', Measured>> = []
      for (let round = 0; round < o.rounds; round++) {
        const order = round % 2 ? [floor, broker] : [broker, floor]
        const got = {} as Record<'broker' | 'floor', Measured>
        for (const t of order) got[t.name as 'broker' | 'floor'] = await measure(t, o.seconds)
        samples.push(got)
        say(
          `  whole flow ${workers}w round ${round + 1}: broker ${f(got.broker.fps)} flows/s (${f(got.broker.cpuUs)} µs CPU per flow; load ${f(got.broker.loadUs)}, provider ${f(got.broker.provUs)}), floor ${f(got.floor.fps)} (${f(got.floor.cpuUs)} µs; ${f(got.floor.loadUs)}, ${f(got.floor.provUs)})`,
        )
      }
      const loaded = workersOf(broker).map(rssMb)
      const mb = (list: number[]) => list.map((m) => `${f(m)} MB`).join(', ')
      const within = (list: number[], max: number) => (list.every((m) => m <= max) ? 'ok' : 'MISS')
      const ws = workers > 1 ? 's' : ''
      memory.push(
        `  ${workers} worker${ws}: idle ${IDLE_MS / 1000} s after start: supervisor ${idle.primary === undefined ? '-' : `${f(idle.primary)} MB (target ≤ 45) ${within([idle.primary], 45)}`}, worker${ws} ${mb(idle.workers)} (target ≤ 60) ${within(idle.workers, 60)}`,
        `    just after start: supervisor ${started.primary === undefined ? '-' : `${f(started.primary)} MB`}, worker${ws} ${mb(started.workers)}; after the runs: worker${ws} ${mb(loaded)}`,
      )
      await Promise.all([broker, floor].map((t) => stopProcess(t.proc)))
      // With SCHED_NONE the kernel hands each connection to whichever worker accepts first: per round,
      // the busiest worker's share of the workers' CPU (50% is an even split).
      if (workers > 1)
        splits.push(
          `  ${workers} workers, busiest worker's share of their CPU per round: broker ${samples.map((s) => `${f(s.broker.split[0] ?? 0)}%`).join(' ')}, floor ${samples.map((s) => `${f(s.floor.split[0] ?? 0)}%`).join(' ')}`,
        )
      const at = (side: 'broker' | 'floor', key: keyof Measured) => median(samples.map((s) => s[side][key] as number))
      const ratios = samples.map((s) => s.broker.fps / s.floor.fps)
      const r = median(ratios)
      const interval = medianInterval(ratios)
      if (interval)
        intervals.push(
          `  ${workers} worker${workers > 1 ? 's' : ''}: broker÷floor's median lies within ${f(interval[0], 2)}–${f(interval[1], 2)} (90% or more, from the ${samples.length} rounds, assuming nothing of their spread)`,
        )
      const bad = samples.reduce((n, s) => n + s.broker.bad + s.floor.bad, 0)
      rows.push(
        `  ${`${workers} worker${workers > 1 ? 's' : ''}`.padEnd(10)}${f(at('broker', 'fps')).padStart(7)}${f(at('floor', 'fps')).padStart(7)}   ${f(r, 2)} (${f(Math.min(...ratios), 2)}–${f(Math.max(...ratios), 2)}) ${(r >= 0.95 ? 'ok' : 'MISS').padEnd(4)}  ${`${f(at('broker', 'p50'), 1)}/${f(at('broker', 'p99'), 1)} ${f(at('floor', 'p50'), 1)}/${f(at('floor', 'p99'), 1)}`.padEnd(22)}${f(at('broker', 'cpuUs')).padStart(7)}${f(at('floor', 'cpuUs')).padStart(7)}${f(at('broker', 'redisUs')).padStart(7)}${f(at('floor', 'redisUs')).padStart(7)}${bad ? `  (${bad} failed flows)` : ''}`,
      )
    }
    console.log(
      `\nWhole OAuth 2 3-legged flows (store → start → callback with the token exchange → the app), ${o.users} concurrent users, ${o.rounds} rounds of ${o.seconds} s, alternating; target broker÷floor ≥ 0.95`,
    )
    console.log(
      `  ${'workers'.padEnd(10)} broker  floor   broker÷floor       flow ms p50/p99 b / floor   CPU µs/flow b, floor; Redis b, floor`,
    )
    for (const row of rows) console.log(row)
    for (const line of intervals) console.log(line)
    for (const line of splits) console.log(line)
    console.log(`Resident memory of broker serve (store: redis), MB`)
    for (const line of memory) console.log(line)
  } finally {
    loader.kill()
    provider.close()
  }
}
