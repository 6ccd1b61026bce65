/**
 * The load generator of `npm run bench`, in its own process so that it does not share an event
 * loop with anything it measures. It takes runs over IPC and answers autocannon's numbers.
 */
import autocannon, { type Result } from 'autocannon'

export interface LoadRun {
  url: string
  method: 'GET' | 'POST'
  /** Paths to cycle through (one per request), e.g. single-use start URLs. */
  paths?: string[]
  path?: string
  body?: string
  contentType?: string
  connections: number
  duration?: number
  amount?: number
}

export interface LoadResult {
  rps: number
  p50: number
  p99: number
  requests: number
  /** Answers that are neither 2xx nor 3xx, plus socket errors and timeouts. */
  bad: number
}

process.on('message', async (run: LoadRun) => {
  let i = 0
  const paths = run.paths
  // Throughput from our own clock, first request to last answer: autocannon's duration for a run of
  // a fixed `amount` ends on its next one-second tick, so short runs came out quantized.
  let first = 0
  let last = 0
  const result = await new Promise<Result>((resolve, reject) => {
    const options = {
      url: run.url,
      connections: run.connections,
      ...(run.amount ? { amount: run.amount } : { duration: run.duration ?? 3 }),
      requests: [
        {
          method: run.method,
          path: run.path,
          ...(run.body
            ? { body: run.body, headers: { 'content-type': run.contentType ?? 'application/x-www-form-urlencoded' } }
            : {}),
          ...(paths
            ? { setupRequest: (req: Record<string, unknown>) => ({ ...req, path: paths[i++ % paths.length] }) }
            : {}),
        },
      ],
    }
    const instance = autocannon(options, (err, res) => (err ? reject(err) : resolve(res)))
    instance.on('response', () => {
      last = performance.now()
    })
    first = performance.now()
  })
  const ok = result['2xx'] + result['3xx']
  const out: LoadResult = {
    rps: ok / (last > first ? (last - first) / 1000 : result.duration || 1),
    p50: result.latency.p50,
    p99: result.latency.p99,
    requests: ok,
    bad: result.non2xx - result['3xx'] + result.errors + result.timeouts,
  }
  process.send!(out)
})
process.send!({ ready: true })
