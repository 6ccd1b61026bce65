/** The flow-steps part of `npm run bench`: a whole OAuth 2 3-legged flow at a time, the broker's time per step. */
import { createServer, type Server } from 'node:http'
import { newId } from '../src/broker/ids.js'
import { RECORD, startBroker, stopProcess } from './servers.js'

const f = (n: number, d = 0) => n.toFixed(d)

/** Runs `n` flows one at a time against a local provider and prints the broker's time per step. */
export async function flowSteps(redisPort: number, n: number): Promise<void> {
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
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ access_token: newId(), refresh_token: newId(), token_type: 'Bearer', expires_in: 3600 }))
      providerMs += Number(process.hrtime.bigint() - t0) / 1e6
    })
  })
  const app: Server = createServer((_req, res) => res.end('ok'))
  await Promise.all([
    new Promise<void>((r) => provider.listen(0, '127.0.0.1', () => r())),
    new Promise<void>((r) => app.listen(0, '127.0.0.1', () => r())),
  ])
  const pPort = (provider.address() as { port: number }).port
  const aPort = (app.address() as { port: number }).port
  const broker = await startBroker(redisPort, 1)
  const record = {
    ...RECORD,
    authorize_url: `http://127.0.0.1:${pPort}/authorize`,
    access_url: `http://127.0.0.1:${pPort}/token`,
    callback: `http://localhost:${aPort}/cb`,
  }
  const steps: Record<string, number[]> = {
    'POST /store': [],
    'GET /start → 302': [],
    'GET /callback (token exchange) → 302': [],
    '  of which the provider': [],
  }
  const time = async <T>(fn: () => Promise<T>): Promise<[T, number]> => {
    const t0 = performance.now()
    const v = await fn()
    return [v, performance.now() - t0]
  }
  for (let i = 0; i < n; i++) {
    const [stored, tStore] = await time(
      async () =>
        (await (
          await fetch(`${broker.url}/store`, {
            method: 'POST',
            headers: { 'content-type': 'application/x-www-form-urlencoded' },
            body: new URLSearchParams(record).toString(),
          })
        ).json()) as { hash: string },
    )
    const [start, tStart] = await time(() => fetch(`${broker.url}/start?hash=${stored.hash}`, { redirect: 'manual' }))
    const cookie = start.headers.getSetCookie()[0]!.split(';')[0]!
    const authorize = await fetch(start.headers.get('location')!, { redirect: 'manual' })
    const callback = new URL(authorize.headers.get('location')!)
    const before = providerMs
    const [done, tCallback] = await time(() =>
      fetch(`${broker.url}${callback.pathname}${callback.search}`, { redirect: 'manual', headers: { cookie } }),
    )
    if (done.status !== 302 || !done.headers.get('location')?.includes('access_token='))
      throw new Error(`the flow did not deliver a token (${done.status})`)
    if (i < Math.min(20, n / 5)) continue // warm-up
    steps['POST /store']!.push(tStore)
    steps['GET /start → 302']!.push(tStart)
    steps['GET /callback (token exchange) → 302']!.push(tCallback)
    steps['  of which the provider']!.push(providerMs - before)
  }
  await stopProcess(broker.proc)
  provider.close()
  app.close()
  const p = (xs: number[], q: number) =>
    [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))]!
  console.log(`\nOAuth 2 3-legged flow, one at a time (${n} flows, 1 worker; time seen by the client on loopback, ms)`)
  console.log(`  ${'step'.padEnd(40)} ${'p50'.padStart(6)} ${'p99'.padStart(6)}`)
  for (const [step, xs] of Object.entries(steps))
    console.log(`  ${step.padEnd(40)} ${f(p(xs, 0.5), 2).padStart(6)} ${f(p(xs, 0.99), 2).padStart(6)}`)
  const own = steps['GET /callback (token exchange) → 302']!.map((t, i) => t - steps['  of which the provider']![i]!)
  const perFlow = p(steps['POST /store']!, 0.5) + p(steps['GET /start → 302']!, 0.5) + p(own, 0.5)
  console.log(`  ${'broker time per flow (3 steps, no provider)'.padEnd(40)} ${f(perFlow, 2).padStart(6)}`)
}
