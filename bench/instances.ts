/**
 * The scale-out part of `npm run bench`: two `broker serve` instances (one worker each) on one
 * Redis, the load split evenly between them by two load generators at once, against one instance
 * taking the whole load, in alternating rounds. Flows for /start are stored once and split between
 * the instances, so each start URL is used once across both.
 */
import type { LoadResult } from './load.js'
import {
  type Endpoint,
  type Loader,
  loadRun,
  median,
  startBroker,
  startLoader,
  stopProcess,
  warmUp,
} from './servers.js'

export interface InstancesOptions {
  redisPort: number
  endpoints: readonly Endpoint[]
  rounds: number
  seconds: number
  connections: number
  /** Stores `n` flows the way /store does and returns their hashes. */
  seed(n: number): Promise<string[]>
  /** A hash for /hash-check. */
  hashCheck: string
  /** The load generator the rest of the bench uses; a second one is started here. */
  loader: Loader
}

/** Measures and prints two instances ÷ one instance, per endpoint. */
export async function instancesRun(o: InstancesOptions): Promise<void> {
  const second = await startLoader()
  const [a, b] = await Promise.all([startBroker(o.redisPort, 1), startBroker(o.redisPort, 1)])
  try {
    for (const t of [a, b])
      await warmUp((run) => o.loader.run(run), [t.url], o.endpoints, o.connections, {
        hashCheck: o.hashCheck,
        starts: o.endpoints.includes('GET /start') ? await o.seed(4000) : [],
      })
    const ratios: Record<string, { one: number[]; two: number[] }> = {}
    for (let round = 0; round < o.rounds; round++) {
      for (const e of o.endpoints) {
        const got = (ratios[e] ??= { one: [], two: [] })
        const count =
          e === 'GET /start' ? Math.max(4000, Math.round(median(got.one.length ? got.one : [3000]) * o.seconds)) : 0
        const one = async () => {
          const starts = count ? await o.seed(count) : []
          got.one.push(
            (await o.loader.run(loadRun(e, a.url, o.connections, o.seconds, { hashCheck: o.hashCheck, starts }))).rps,
          )
        }
        const two = async () => {
          const starts = count ? await o.seed(count) : []
          const half = Math.ceil(starts.length / 2)
          const [x, y]: LoadResult[] = await Promise.all([
            o.loader.run(
              loadRun(e, a.url, o.connections / 2, o.seconds, {
                hashCheck: o.hashCheck,
                starts: starts.slice(0, half),
              }),
            ),
            second.run(
              loadRun(e, b.url, o.connections / 2, o.seconds, { hashCheck: o.hashCheck, starts: starts.slice(half) }),
            ),
          ])
          got.two.push(x!.rps + y!.rps)
        }
        for (const step of round % 2 ? [two, one] : [one, two]) await step()
      }
    }
    console.log(
      `\nTwo instances (1 worker each, one Redis) ÷ one instance (1 worker), the same ${o.connections} connections split between them (${o.rounds} rounds)`,
    )
    for (const e of o.endpoints) {
      const { one, two } = ratios[e]!
      const r = two.map((t, i) => t / one[i]!)
      const rps = (xs: number[]) => `${median(xs).toFixed(0).padStart(6)} req/s`
      const spread = `${Math.min(...r).toFixed(2)}–${Math.max(...r).toFixed(2)}`
      console.log(`  ${e.padEnd(16)} one ${rps(one)}   two ${rps(two)}   ratio ${median(r).toFixed(2)} (${spread})`)
    }
  } finally {
    second.stop()
    await Promise.all([stopProcess(a.proc), stopProcess(b.proc)])
  }
}
