/**
 * The load generator of the whole-flow part of `npm run bench`, in its own process (it shares no
 * event loop with what it measures). Each of `users` concurrent users runs complete OAuth 2
 * three-legged flows one after another for `seconds`: POST /store, GET /start (302 to the provider,
 * a cookie), GET /callback with a code, the state and the cookie (the server's token exchange against
 * the bench's token endpoint, then 302 to the app), GET the app's URL. The provider's /authorize is
 * skipped: the user comes back with a code at once, as if the provider had redirected at once.
 * Takes runs over IPC, answers flows per second and per-flow latency.
 */
import { Agent, type IncomingMessage, request } from 'node:http'

export interface FlowRun {
  /** The server under test. */
  url: string
  /** The form /store gets. */
  form: string
  users: number
  seconds: number
}

export interface FlowResult {
  /** Complete flows per second, first request to last answer. */
  fps: number
  flows: number
  /** Per-flow latency, ms. */
  p50: number
  p99: number
  /** Flows that went wrong (a step's unexpected status, a socket error), with the first reason. */
  bad: number
  firstError?: string
}

// One kept-alive agent per run: each user's requests go over its own connections, as browsers' would.
interface Answer {
  status: number
  headers: IncomingMessage['headers']
  body: string
}

function send(agent: Agent, url: URL, opts: { method?: string; body?: string; cookie?: string } = {}) {
  return new Promise<Answer>((resolve, reject) => {
    const headers: Record<string, string | number> = {}
    if (opts.body !== undefined) {
      headers['content-type'] = 'application/x-www-form-urlencoded'
      headers['content-length'] = Buffer.byteLength(opts.body)
    }
    if (opts.cookie) headers.cookie = opts.cookie
    const req = request(url, { method: opts.method ?? 'GET', agent, headers })
    req.on('error', reject)
    req.on('response', (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (d: string) => (body += d))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }))
      res.on('error', reject)
    })
    req.end(opts.body)
  })
}

const expect = (a: Answer, status: number, step: string) => {
  if (a.status !== status) throw new Error(`${step}: ${a.status} ${a.body.slice(0, 200)}`)
  return a
}

/** One complete flow; throws on the first step that answers otherwise than a working flow would. */
async function flow(agent: Agent, base: URL, form: string, n: number): Promise<void> {
  const stored = expect(await send(agent, new URL('/store', base), { method: 'POST', body: form }), 200, 'POST /store')
  const { hash } = JSON.parse(stored.body) as { hash: string }
  const start = expect(await send(agent, new URL(`/start?hash=${encodeURIComponent(hash)}`, base)), 302, 'GET /start')
  const toProvider = new URL(start.headers.location!)
  const cookie = (start.headers['set-cookie'] ?? []).map((c) => c.split(';')[0]).join('; ')
  // The provider sends the browser back to redirect_uri; it is asked on the server's own address
  // (it may name localhost, which can resolve to ::1 while the server listens on 127.0.0.1).
  const back = new URL(toProvider.searchParams.get('redirect_uri')!)
  const callback = new URL(back.pathname, base)
  callback.search = back.search
  callback.searchParams.set('code', `code-${n}`)
  callback.searchParams.set('state', toProvider.searchParams.get('state')!)
  const done = expect(await send(agent, callback, { cookie }), 302, 'GET /callback')
  const app = new URL(done.headers.location!)
  if (!app.searchParams.get('access_token')) throw new Error(`GET /callback: no token delivered (${app.href})`)
  app.hostname = '127.0.0.1'
  expect(await send(agent, app), 200, 'the app')
}

async function run(r: FlowRun): Promise<FlowResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: r.users * 2 })
  const base = new URL(r.url)
  const times: number[] = []
  let bad = 0
  let firstError: string | undefined
  let n = 0
  const until = performance.now() + r.seconds * 1000
  let last = 0
  const first = performance.now()
  const user = async () => {
    while (performance.now() < until) {
      const t0 = performance.now()
      try {
        await flow(agent, base, r.form, n++)
        last = performance.now()
        times.push(last - t0)
      } catch (err) {
        bad++
        firstError ??= (err as Error).message
      }
    }
  }
  await Promise.all(Array.from({ length: r.users }, user))
  agent.destroy()
  const sorted = times.sort((a, b) => a - b)
  const q = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0
  return {
    fps: times.length / Math.max(0.001, (last - first) / 1000),
    flows: times.length,
    p50: q(0.5),
    p99: q(0.99),
    bad,
    ...(firstError ? { firstError } : {}),
  }
}

process.on('message', (r: FlowRun) => {
  run(r).then(
    (result) => process.send!(result),
    (err: Error) => process.send!({ fps: 0, flows: 0, p50: 0, p99: 0, bad: 1, firstError: err.message }),
  )
})
process.send!({ ready: true })
