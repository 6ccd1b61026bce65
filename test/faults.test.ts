import { execFileSync } from 'node:child_process'
import type { Server } from 'node:http'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type CallbackApp, startCallbackApp } from './helpers/app.js'
import { type BrokerProcess, startBroker } from './helpers/broker.js'
import { codeFlow, startCodeProvider } from './helpers/code-flow.js'
import { Browser } from './helpers/browser.js'
import { type FaultProxy, startFaultProxy } from './helpers/fault-proxy.js'
import { type OAuth2Provider, startOAuth2Provider } from './helpers/oauth2-provider.js'
import { waitFor } from './helpers/ports.js'
import { type RedisServer, startRedis } from './helpers/redis.js'

// Faults a broker meets in production: its store going away or hanging, providers that hang or
// answer garbage. Bounded in count; hang guards are generous limits, not speed assertions.

/** A request that must be answered: aborts (and fails the test) after `ms` instead of hanging it. */
const answered = (url: string, init: RequestInit = {}, ms = 8000) =>
  fetch(url, { ...init, signal: AbortSignal.timeout(ms) })

const json = (body: unknown): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
})

describe('the store goes away', () => {
  let redis: RedisServer
  let broker: BrokerProcess
  const record = (n: number) => ({
    auth_version: '2',
    auth_leg: '3',
    client_id: `c${n}`,
    authorize_url: 'http://127.0.0.1:9/a',
    access_url: 'http://127.0.0.1:9/t',
    callback: 'http://localhost:9/cb',
  })

  beforeAll(async () => {
    // Append-only file on, so a stop and restart keeps the data as a real deployment would.
    redis = await startRedis(['--appendonly', 'yes'])
    broker = await startBroker({
      args: ['--store', 'redis', '--store-port', String(redis.port), '--workers', '2'],
      env: { BROKER_STORE_TIMEOUT: '300' },
    })
  })
  afterAll(async () => {
    await broker?.stop()
    await redis?.stop()
  })

  it('answers 503 STORE_UNAVAILABLE while Redis is down, keeps /ping up, and recovers without a restart, losing nothing', async () => {
    const before = (await (await answered(`${broker.url}/store`, json(record(0)))).json()) as {
      hash: string
      url: string
    }

    // Load running while Redis stops and comes back: every answer is a 200 or a 503, never a 500 or a hang.
    // Paced and bounded by time rather than by count alone: a fast broker used to finish 400 requests
    // per loader before Redis had stopped, and the outage then saw no request of the load at all.
    const statuses: number[] = []
    const odd: string[] = []
    let loading = true
    const until = Date.now() + 60_000
    const load = Promise.all(
      Array.from({ length: 4 }, async (_, worker) => {
        for (let i = 0; loading && i < 4000 && Date.now() < until; i++) {
          if (i) await new Promise((resolve) => setTimeout(resolve, 5))
          const res = await answered(`${broker.url}/store`, json(record(worker * 1000 + i)))
          statuses.push(res.status)
          const body = await res.text()
          if (res.status !== 200 && res.status !== 503) odd.push(`${res.status} ${body}`)
        }
      }),
    )

    await redis.pause()
    const down = await Promise.all([
      answered(`${broker.url}/store`, json(record(1))),
      answered(`${broker.url}/hash-check?hash=${before.hash}`),
      answered(before.url, { redirect: 'manual' }),
      answered(`${broker.url}/result`, json({ result: 'x' })),
    ])
    for (const res of down) {
      expect(res.status).toBe(503)
      expect(((await res.json()) as { code: string }).code).toBe('STORE_UNAVAILABLE')
    }
    for (let i = 0; i < 10; i++) expect((await answered(`${broker.url}/ping`)).status).toBe(200)

    await redis.restart()
    // Both workers reconnect by themselves: new connections, so each worker gets asked.
    await waitFor(
      async () => {
        const oks = await Promise.all(
          Array.from(
            { length: 8 },
            async () =>
              (
                await answered(`${broker.url}/store`, {
                  ...json(record(2)),
                  headers: { 'content-type': 'application/json', connection: 'close' },
                })
              ).status === 200,
          ),
        )
        return oks.every(Boolean)
      },
      10_000,
      'the broker to store flows again after Redis came back',
    )
    loading = false
    await load

    expect(statuses.length).toBeGreaterThan(0)
    expect(odd, broker.stderr()).toEqual([])
    expect(statuses).toContain(503)

    // The flow stored before the outage is still there and still starts.
    const check = await answered(`${broker.url}/hash-check?hash=${before.hash}`)
    expect(check.status).toBe(200)
    expect(((await check.json()) as { progress: string }).progress).toBe('stored')
    expect((await answered(before.url, { redirect: 'manual' })).status).toBe(302)
    expect(broker.proc.exitCode).toBeNull()
    expect(broker.stderr()).not.toMatch(/unexpected error|exited \(/)
  })

  it('answers 503 instead of hanging while Redis hangs (SIGSTOP), and serves again when it resumes', async () => {
    const probe = new Redis({ port: redis.port, host: '127.0.0.1' })
    const pid = Number(/process_id:(\d+)/.exec(await probe.info('server'))![1])
    probe.disconnect()
    const { hash } = (await (await answered(`${broker.url}/store`, json(record(3)))).json()) as { hash: string }
    process.kill(pid, 'SIGSTOP')
    try {
      const hung = await Promise.all([
        answered(`${broker.url}/store`, json(record(4))),
        answered(`${broker.url}/hash-check?hash=${hash}`),
      ])
      for (const res of hung) {
        expect(res.status).toBe(503)
        expect(((await res.json()) as { code: string }).code).toBe('STORE_UNAVAILABLE')
      }
      expect((await answered(`${broker.url}/ping`)).status).toBe(200)
    } finally {
      process.kill(pid, 'SIGCONT')
    }
    await waitFor(
      async () => (await answered(`${broker.url}/hash-check?hash=${hash}`)).status === 200,
      10_000,
      'hash-check after SIGCONT',
    )
  })
})

describe('the store loses replies (a command carried out, its answer cut off)', () => {
  let redis: RedisServer
  let proxy: FaultProxy
  let provider: OAuth2Provider
  let app: CallbackApp
  let broker: BrokerProcess

  beforeAll(async () => {
    redis = await startRedis()
    proxy = await startFaultProxy(redis.port)
    provider = await startOAuth2Provider()
    app = await startCallbackApp()
    broker = await startBroker({
      args: ['--store', 'redis', '--store-port', String(proxy.port), '--workers', '2'],
      env: { BROKER_STORE_TIMEOUT: '300' },
    })
  })
  afterAll(async () => {
    await broker?.stop()
    proxy?.close()
    await provider?.stop()
    await app?.close()
    await redis?.stop()
  })

  const flow = async () => {
    const res = await answered(
      `${broker.url}/store`,
      json({
        auth_version: '2',
        auth_leg: '3',
        client_id: 'c',
        client_secret: 's',
        authorize_url: provider.authorizeUrl,
        access_url: provider.tokenUrl,
        callback: app.callback,
        state: 'app-state',
      }),
    )
    const body = (await res.json()) as { hash?: string; url?: string; code?: string }
    const statuses = [res.status]
    if (res.status !== 200) return { statuses, codes: [body.code], delivered: false }
    const walk = await new Browser().go(body.url!)
    statuses.push(...walk.hops.map((h) => h.status))
    const codes: unknown[] = []
    if (walk.status >= 400) codes.push((JSON.parse(walk.body) as { code: string }).code)
    const check = await answered(`${broker.url}/hash-check?hash=${body.hash}`)
    statuses.push(check.status)
    await check.arrayBuffer()
    return { statuses, codes, delivered: walk.body === 'app got it' }
  }

  it('answers each request with its own answer or 503 STORE_UNAVAILABLE, never a 500, and completes flows once replies come back', async () => {
    // Every 9th Redis reply (across both workers' connections) is lost: the connection is cut after
    // Redis carried the command out. A replayed SET NX or claim would meet its own first write.
    proxy.chaos(9)
    const results: Awaited<ReturnType<typeof flow>>[] = []
    const until = Date.now() + 20_000
    await Promise.all(
      Array.from({ length: 3 }, async () => {
        for (let i = 0; i < 40 && Date.now() < until; i++) results.push(await flow())
      }),
    )
    proxy.chaos(0)
    expect(proxy.cuts).toBeGreaterThan(5)
    const statuses = results.flatMap((r) => r.statuses)
    // 302s along the way, 200 from the app, /hash-check and /store; 503 where a reply was lost; 409 for
    // a start URL whose claim Redis carried out but whose answer was lost (used once, as it must be).
    expect(
      statuses.filter((s) => ![200, 302, 409, 503].includes(s)),
      JSON.stringify(results),
    ).toEqual([])
    expect(results.flatMap((r) => r.codes).filter((c) => c !== 'STORE_UNAVAILABLE' && c !== 'FLOW_STARTED')).toEqual([])
    expect(statuses).toContain(503)
    expect(results.some((r) => r.delivered)).toBe(true)
    // Nothing the app was handed is an internal error: at most the store's own outage, by its code.
    const told = app.received.map((r) => r.query.broker_error ?? r.body.broker_error).filter(Boolean)
    expect(told.filter((c) => c !== 'STORE_UNAVAILABLE')).toEqual([])

    // Replies come back: every flow completes, once both workers' clients have reconnected (new
    // connections, so each worker gets asked).
    await waitFor(
      async () => {
        const oks = await Promise.all(
          Array.from({ length: 8 }, async () => {
            const stored = await answered(`${broker.url}/hash-check?hash=${'x'.repeat(32)}`, {
              headers: { connection: 'close' },
            })
            await stored.arrayBuffer()
            return stored.status !== 503
          }),
        )
        return oks.every(Boolean)
      },
      10_000,
      "both workers' store clients to answer again",
    )
    for (let i = 0; i < 6; i++) expect((await flow()).delivered).toBe(true)
    expect(broker.proc.exitCode).toBeNull()
    expect(broker.stderr()).not.toMatch(/unexpected error|exited \(/)
  }, 90_000)
})

describe('providers that hang or answer garbage', () => {
  let provider: Server
  let providerUrl = ''
  let app: CallbackApp
  let broker: BrokerProcess

  // /authorize sends the browser straight back with a code; /token/<mode> misbehaves as named.
  const TOKEN: Record<string, (res: import('node:http').ServerResponse) => void> = {
    hang: () => {},
    'hang-body': (res) => {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.write('{"access_token":')
    },
    html: (res) => {
      res.writeHead(200, { 'content-type': 'text/html' })
      res.end('<!doctype html><html><body><h1>Sign in</h1></body></html>')
    },
    truncated: (res) => {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end('{"access_token":"abc","token_ty')
    },
    '500': (res) => {
      res.writeHead(500, { 'content-type': 'text/plain' })
      res.end('Internal Server Error')
    },
    reset: (res) => {
      res.socket?.destroy()
    },
    'json-array': (res) => {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end('[1,2,3]')
    },
  }

  beforeAll(async () => {
    ;({ server: provider, url: providerUrl } = await startCodeProvider((url, res) =>
      TOKEN[url.pathname.split('/')[2] ?? '']?.(res),
    ))
    app = await startCallbackApp()
    broker = await startBroker({ args: ['--store', 'memory', '--provider-timeout', '700'] })
  })
  afterAll(async () => {
    await broker?.stop()
    await app?.close()
    provider?.closeAllConnections()
    await new Promise((r) => provider?.close(r))
  })

  const flow = async (mode: string, extra: Record<string, string> = {}) => {
    const record = codeFlow(providerUrl, `/token/${mode}`, { callback: app.callback, state: `app-${mode}` }, extra)
    const res = await answered(`${broker.url}/store`, json(record))
    return ((await res.json()) as { url: string }).url
  }

  it.each([
    ['hang', 'PROVIDER_TIMEOUT', /did not answer within 700 ms/],
    ['hang-body', 'PROVIDER_TIMEOUT', /did not answer within 700 ms/],
    ['html', 'PROVIDER_ERROR', /neither JSON nor form-encoded: <!doctype html>/],
    ['truncated', 'PROVIDER_ERROR', /neither JSON nor form-encoded/],
    ['500', 'PROVIDER_ERROR', /answered 500/],
    ['reset', 'PROVIDER_ERROR', /Could not reach/],
    ['json-array', 'PROVIDER_ERROR', /neither JSON nor form-encoded/],
  ])('a token endpoint that does "%s" ends the flow with %s delivered to the app', async (mode, code, description) => {
    const res = await new Browser().go(await flow(mode))
    expect(res.body).toBe('app got it')
    const got = app.received.at(-1)!.query
    // error is OAuth's vocabulary (RFC 6749), broker_error the broker's registry code.
    const oauth = code === 'PROVIDER_TIMEOUT' ? 'temporarily_unavailable' : 'server_error'
    expect(got).toMatchObject({ error: oauth, broker_error: code, state: `app-${mode}` })
    expect(got.error_description).toMatch(description)
    expect(got.access_token).toBeUndefined()
  })

  it('answers 504 PROVIDER_TIMEOUT as JSON when the flow has no callback, and marks the flow failed', async () => {
    const stored = await answered(
      `${broker.url}/store`,
      json({ auth_version: '2', auth_leg: '2', client_id: 'c', access_url: `${providerUrl}/token/hang` }),
    )
    const { hash, url } = (await stored.json()) as { hash: string; url: string }
    const res = await answered(url)
    expect(res.status).toBe(504)
    expect(((await res.json()) as { code: string }).code).toBe('PROVIDER_TIMEOUT')
    const check = (await (await answered(`${broker.url}/hash-check?hash=${hash}`)).json()) as {
      progress: string
      error: { code: string }
    }
    expect(check).toMatchObject({
      progress: 'failed',
      error: { code: 'PROVIDER_TIMEOUT', error: 'temporarily_unavailable' },
    })
  })
})

describe('a fault during the token exchange', () => {
  // Issue 27, 13 and 14: a process killed while it exchanges the code, and Redis gone right after
  // the exchange. Every started flow still ends in exactly one delivery to the app.
  let redis: RedisServer
  let broker: BrokerProcess
  let app: CallbackApp
  let provider: Server
  let providerUrl = ''
  /** When each mode's token request arrived, in order. */
  const arrived: Record<string, number[]> = {}
  const PROVIDER_TIMEOUT = 3000
  const STORE_TIMEOUT = 200
  // lease.ts: store.timeout + 1 s after the owner's last renewal.
  const LEASE = STORE_TIMEOUT + 1000

  const TOKEN: Record<string, (res: import('node:http').ServerResponse) => void | Promise<void>> = {
    hang: () => {},
    'stop-redis': async (res) => {
      await redis.pause()
      tokens(res)
    },
    'stall-redis': (res) => {
      // Redis hangs for longer than store.timeout, then comes back: the broker's first write times out.
      process.kill(redis.pid, 'SIGSTOP')
      setTimeout(() => process.kill(redis.pid, 'SIGCONT'), STORE_TIMEOUT + 150)
      tokens(res)
    },
  }
  const tokens = (res: import('node:http').ServerResponse) => {
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end('{"access_token":"at-fault","token_type":"Bearer"}')
  }

  beforeAll(async () => {
    ;({ server: provider, url: providerUrl } = await startCodeProvider((url, res) => {
      const mode = url.pathname.split('/')[2] ?? ''
      ;(arrived[mode] ??= []).push(Date.now())
      void TOKEN[mode]?.(res)
    }))
    ;[redis, app] = await Promise.all([startRedis(['--appendonly', 'yes']), startCallbackApp()])
    broker = await startBroker({
      args: ['--store', 'redis', '--store-port', String(redis.port), '--provider-timeout', String(PROVIDER_TIMEOUT)],
      env: { BROKER_STORE_TIMEOUT: String(STORE_TIMEOUT) },
    })
  })
  afterAll(async () => {
    await broker?.stop()
    await app?.close()
    provider?.closeAllConnections()
    await new Promise((r) => provider?.close(r))
    await redis?.stop()
  })

  /** Stores a 3-legged flow whose token endpoint does `mode`. */
  async function stored(mode: string): Promise<{ hash: string; url: string }> {
    const record = codeFlow(providerUrl, `/token/${mode}`, { callback: app.callback, state: `app-${mode}` })
    const res = await answered(`${broker.url}/store`, json(record))
    expect(res.status).toBe(200)
    return (await res.json()) as { hash: string; url: string }
  }
  /** Stores a flow and walks it as a browser would up to the provider's redirect back to /callback. */
  async function begin(mode: string) {
    const { hash, url } = await stored(mode)
    const start = await answered(url, { redirect: 'manual' })
    const cookie = start.headers.getSetCookie()[0]!.split(';')[0]!
    const authorize = await answered(start.headers.get('location')!, { redirect: 'manual' })
    return { hash, url, cookie, callback: authorize.headers.get('location')! }
  }
  const reload = (flow: { cookie: string; callback: string }) =>
    answered(flow.callback, { redirect: 'manual', headers: { cookie: flow.cookie } })
  const hashCheck = async (hash: string) =>
    (await (await answered(`${broker.url}/hash-check?hash=${hash}`)).json()) as {
      progress: string
      error?: { code: string; error: string }
    }
  const workerPids = (): number[] =>
    execFileSync('ps', ['-o', 'pid=', '--ppid', String(broker.proc.pid)], { encoding: 'utf8' })
      .split('\n')
      .map((s) => Number(s.trim()))
      .filter(Boolean)

  it('fails a flow stranded by a worker killed mid-exchange once its lease passes, telling the app exactly once', async () => {
    const flows = await Promise.all([begin('hang'), begin('hang'), begin('hang')])
    const before = app.received.length
    // The browsers wait on /callback while the provider holds the token request; the worker dies.
    const pending = flows.map((f) =>
      reload(f).then(
        (r) => r.status,
        () => 'dropped',
      ),
    )
    await waitFor(async () => (arrived.hang?.length ?? 0) >= 3, 10_000, 'three token requests')
    const workers = workerPids()
    expect(workers).toHaveLength(1)
    process.kill(workers[0]!, 'SIGKILL')
    const killed = Date.now()
    expect(await Promise.all(pending)).toEqual(['dropped', 'dropped', 'dropped'])
    await waitFor(
      async () =>
        workerPids().length === 1 && !workerPids().includes(workers[0]!) && (await fetch(`${broker.url}/ping`)).ok,
      15_000,
      'a new worker',
    )
    // (A reload within the lease is held until it lapses: test/faults-reload.test.ts.)
    const leaseEnds = killed + LEASE
    await new Promise((r) => setTimeout(r, Math.max(0, leaseEnds - Date.now()) + 300))

    // The reload at /callback: the app is told the exchange was interrupted.
    const [viaCallback, viaStart, viaCheck] = flows
    const told = await reload(viaCallback!)
    expect(told.status).toBe(302)
    const to = new URL(told.headers.get('location')!)
    expect(to.origin + to.pathname).toBe(app.callback)
    expect(Object.fromEntries(to.searchParams)).toMatchObject({
      error: 'server_error',
      broker_error: 'EXCHANGE_INTERRUPTED',
      state: 'app-hang',
    })
    expect((await reload(viaCallback!)).status).toBe(409)

    // The start URL opened again: the same, once.
    const started = await answered(viaStart!.url, { redirect: 'manual' })
    expect(started.status).toBe(302)
    expect(new URL(started.headers.get('location')!).searchParams.get('broker_error')).toBe('EXCHANGE_INTERRUPTED')
    expect((await reload(viaStart!)).status).toBe(409)

    // /hash-check first: it shows the failure, and a reload after it tells the app nothing more.
    expect(await hashCheck(viaCheck!.hash)).toMatchObject({
      progress: 'failed',
      error: { code: 'EXCHANGE_INTERRUPTED', error: 'server_error' },
    })
    const late = await reload(viaCheck!)
    expect(late.status).toBe(409)
    expect(((await late.json()) as { code: string }).code).toBe('FLOW_FINISHED')
    for (const f of flows) expect((await hashCheck(f.hash)).progress).toBe('failed')
    // Nothing reached the app but these redirects, which the browser follows: none has been followed here.
    expect(app.received.length).toBe(before)
  }, 60_000)

  it('delivers the tokens when Redis stops right after the exchange, rather than dropping them with a 503', async () => {
    try {
      const res = await new Browser().go((await stored('stop-redis')).url)
      expect(res.status, res.body).toBe(200)
      expect(res.body).toBe('app got it')
      expect(app.received.at(-1)!.query).toMatchObject({ access_token: 'at-fault', state: 'app-stop-redis' })
      // The log line may reach stderr after the app's answer reached the browser.
      await waitFor(
        async () => /the store did not take the completed flow; delivering it all the same/.test(broker.stderr()),
        10_000,
        'the log line about the completed write',
      )
    } finally {
      await redis.restart()
    }
    await waitFor(async () => (await answered(`${broker.url}/ping`)).ok, 10_000, 'the broker after Redis')
  }, 30_000)

  it('retries the completed write within store.timeout: Redis back in time records the flow completed', async () => {
    await waitFor(
      async () => (await answered(`${broker.url}/hash-check?hash=x`)).status === 404,
      10_000,
      'Redis answering the broker again',
    )
    const flow = await stored('stall-redis')
    const res = await new Browser().go(flow.url)
    expect(res.body).toBe('app got it')
    expect(app.received.at(-1)!.query).toMatchObject({ access_token: 'at-fault', state: 'app-stall-redis' })
    await waitFor(async () => (await hashCheck(flow.hash)).progress === 'completed', 5000, 'the flow completed')
  }, 30_000)
})
