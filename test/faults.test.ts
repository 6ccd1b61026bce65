import { createServer, type Server } from 'node:http'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type CallbackApp, startCallbackApp } from './helpers/app.js'
import { type BrokerProcess, startBroker } from './helpers/broker.js'
import { Browser } from './helpers/browser.js'
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
    const statuses: number[] = []
    let loading = true
    const load = Promise.all(
      Array.from({ length: 4 }, async (_, worker) => {
        for (let i = 0; loading && i < 400; i++) {
          const res = await answered(`${broker.url}/store`, json(record(worker * 1000 + i)))
          statuses.push(res.status)
          await res.arrayBuffer()
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
    expect(statuses.filter((s) => s !== 200 && s !== 503)).toEqual([])
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
    provider = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x')
      if (url.pathname === '/authorize') {
        const back = new URL(url.searchParams.get('redirect_uri')!)
        back.searchParams.set('code', 'the-code')
        back.searchParams.set('state', url.searchParams.get('state')!)
        res.writeHead(302, { location: back.toString() })
        return void res.end()
      }
      req.resume()
      TOKEN[url.pathname.split('/')[2] ?? '']?.(res)
    })
    await new Promise<void>((r) => provider.listen(0, '127.0.0.1', () => r()))
    const a = provider.address()
    providerUrl = `http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}`
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
    const res = await answered(
      `${broker.url}/store`,
      json({
        auth_version: '2',
        auth_leg: '3',
        client_id: 'c',
        authorize_url: `${providerUrl}/authorize`,
        access_url: `${providerUrl}/token/${mode}`,
        callback: app.callback,
        state: `app-${mode}`,
        ...extra,
      }),
    )
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
