import { createServer, type Server, type ServerResponse } from 'node:http'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type CallbackApp, startCallbackApp } from './helpers/app.js'
import { type BrokerProcess, startBroker } from './helpers/broker.js'
import { type BrowseResult, Browser } from './helpers/browser.js'
import { codeFlow, redirectBack } from './helpers/code-flow.js'
import { storeAt } from './helpers/flow-suite.js'
import { waitFor } from './helpers/ports.js'
import { type RedisServer, startRedis } from './helpers/redis.js'

// Issue 33 (3): the provider has answered with tokens, and the broker's next write fails. Redis
// refuses it (an error reply: here NOREPLICAS from min-replicas-to-write), does not answer within
// store.timeout (SIGSTOP), or carries it out without the replica's acknowledgement store.replicas
// asks for (the replica SIGSTOPped: WAIT answers 0). The tokens reach the app all the same: at once
// for query and form_post (the browser is right there), and for `code` after retrying within
// store.timeout; a code that could not be kept at all is a clean error to the app, never a 503 page.

const STORE_TIMEOUT = 400
/** A fault that ends by itself, within the retries of store.timeout after the first failed write. */
const SHORT = STORE_TIMEOUT / 2
/** The store's faults that last: each is met after an exchange (/callback) and after a device flow's poll. */
const LASTING = [
  ['refuses it', 'refuse'],
  ['does not answer within store.timeout', 'hang'],
  ['has no replica acknowledge it', 'unreplicated'],
]

describe('a write that fails after the provider answered with tokens', () => {
  let master: RedisServer
  let replica: RedisServer
  let admin: Redis
  let broker: BrokerProcess
  let app: CallbackApp
  let provider: Server
  let providerUrl = ''
  /** Ends the fault of the flow under way (and is awaited before the next test). */
  let heal: () => Promise<void> = async () => {}
  /** Set by a test: the provider's /authorize stops the replica, so the /callback that follows finds it lagging. */
  let lagAtAuthorize = false
  /** Set by a test: the provider's PAR endpoint stops the replica, so /start's first step's write finds it lagging. */
  let lagAtPar = false
  /** Set by a test: the provider's PAR endpoint refuses the request (400 invalid_request), once. */
  let parRefuses = false
  /** The authorization request last pushed (RFC 9126), which the provider's /authorize answers for a request_uri. */
  let pushed = new URLSearchParams()

  const refuse = async () => void (await admin.config('SET', 'min-replicas-to-write', '2'))
  const accept = async () => void (await admin.config('SET', 'min-replicas-to-write', '0'))
  const signal = (server: RedisServer, sig: NodeJS.Signals) => void process.kill(server.pid, sig)

  /** What the token endpoint does before it answers: the fault starts as the tokens leave. */
  const FAULTS: Record<string, () => Promise<void>> = {
    refuse: async () => {
      await refuse()
      heal = accept
    },
    'refuse-short': async () => {
      await refuse()
      const healed = new Promise<void>((r) => setTimeout(() => void accept().then(r), SHORT))
      heal = () => healed
    },
    hang: async () => {
      signal(master, 'SIGSTOP')
      heal = async () => signal(master, 'SIGCONT')
    },
    'hang-short': async () => {
      signal(master, 'SIGSTOP')
      const healed = new Promise<void>((r) => setTimeout(() => r(signal(master, 'SIGCONT')), SHORT))
      heal = () => healed
    },
    unreplicated: async () => {
      signal(replica, 'SIGSTOP')
      heal = async () => signal(replica, 'SIGCONT')
    },
    none: async () => {},
  }
  const tokens = (res: ServerResponse, fault: string) => {
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end(JSON.stringify({ access_token: `at-${fault}`, refresh_token: `rt-${fault}`, token_type: 'Bearer' }))
  }

  beforeAll(async () => {
    provider = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x')
      if (url.pathname === '/par') {
        let body = ''
        req.on('data', (c: Buffer) => (body += c))
        req.on('end', () => {
          pushed = new URLSearchParams(body)
          if (lagAtPar) {
            lagAtPar = false
            signal(replica, 'SIGSTOP')
            heal = async () => signal(replica, 'SIGCONT')
          }
          if (parRefuses) {
            parRefuses = false
            res.writeHead(400, { 'content-type': 'application/json' })
            return void res.end(JSON.stringify({ error: 'invalid_request', error_description: 'no such client' }))
          }
          res.writeHead(201, { 'content-type': 'application/json' })
          res.end(JSON.stringify({ request_uri: 'urn:ietf:params:oauth:request_uri:x', expires_in: 60 }))
        })
        return
      }
      if (url.pathname === '/authorize' && url.searchParams.has('request_uri')) {
        return redirectBack(res, pushed.get('redirect_uri')!, pushed.get('state')!)
      }
      if (url.pathname === '/authorize') {
        if (lagAtAuthorize) {
          lagAtAuthorize = false
          signal(replica, 'SIGSTOP')
          heal = async () => signal(replica, 'SIGCONT')
        }
        return redirectBack(res, url.searchParams.get('redirect_uri')!, url.searchParams.get('state')!)
      }
      if (url.pathname === '/device') {
        req.resume()
        res.writeHead(200, { 'content-type': 'application/json' })
        const device = {
          device_code: 'the-device-code',
          user_code: 'ABCD-EFGH',
          verification_uri: `${providerUrl}/verify`,
        }
        return void res.end(JSON.stringify({ ...device, expires_in: 600, interval: 1 }))
      }
      req.resume()
      const fault = url.pathname.split('/')[2] ?? ''
      void FAULTS[fault]!().then(() => tokens(res, fault))
    })
    await new Promise<void>((r) => provider.listen(0, '127.0.0.1', () => r()))
    providerUrl = `http://127.0.0.1:${(provider.address() as { port: number }).port}`
    master = await startRedis()
    ;[replica, app] = await Promise.all([
      startRedis(['--replicaof', '127.0.0.1', String(master.port)]),
      startCallbackApp(),
    ])
    admin = new Redis({ port: master.port, maxRetriesPerRequest: 1 })
    await waitFor(
      async () => /slave0:.*state=online/.test(await admin.info('replication')),
      10_000,
      'the replica linked',
    )
    broker = await startBroker({
      args: ['--store', 'redis', '--store-port', String(master.port), '--store-replicas', '1'],
      env: { BROKER_STORE_TIMEOUT: String(STORE_TIMEOUT), BROKER_LOG_LEVEL: 'warn' },
    })
  }, 60_000)
  afterAll(async () => {
    await heal()
    await broker?.stop()
    admin?.disconnect()
    await app?.close()
    provider?.closeAllConnections()
    await new Promise((r) => provider?.close(r))
    await replica?.stop()
    await master?.stop()
  })

  /** Ends the fault under way now (the next test starts without one). */
  const healNow = async () => {
    await heal()
    heal = async () => {}
  }
  /** An OAuth 2 code flow's record whose token endpoint starts `fault`; `state`: the app's. */
  const record = (fault: string, state: string, more: Record<string, string> = {}) =>
    codeFlow(providerUrl, `/token/${fault}`, { callback: app.callback, state }, more)

  /** Stores a flow whose token endpoint starts `fault`, and walks it as a browser; the fault healed after. */
  async function walk(
    fault: string,
    delivery: 'query' | 'form_post' | 'code',
    /** What to do with the app's delivery while the fault lasts. */
    during?: (got: Array<{ query: Record<string, string> }>, end: BrowseResult, browser: Browser) => Promise<void>,
  ) {
    const { hash, url } = await storeAt(broker.url, record(fault, `app-${fault}`, { delivery }))
    const before = app.received.length
    const logged = broker.stderr().length
    const browser = new Browser()
    try {
      const end = await browser.go(url)
      await during?.(app.received.slice(before), end, browser)
      const callback = end.hops.find((h) => new URL(h.url).pathname === '/callback')!.url
      return {
        end,
        hash,
        got: app.received.slice(before),
        log: broker.stderr().slice(logged),
        /** Where the log of this walk starts, for a line that may come after the answer (loggedSince). */
        from: logged,
        /** The browser's reload of the broker's /callback: its status and what the app got since the first. */
        reload: async () => {
          const again = await browser.go(callback)
          return { status: again.hops[0]!.status, got: app.received.slice(before) }
        },
      }
    } finally {
      await healNow()
    }
  }
  /** POST /result: its status and JSON body. */
  const postResult = async (body: { result: string } | { hash: string }) => {
    const res = await fetch(`${broker.url}/result`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
    return { status: res.status, body: (await res.json()) as Record<string, unknown> }
  }
  /** POST /result {result}: a code redeemed. */
  const redeem = (code: string) => postResult({ result: code })
  /** POST /result {hash}: one poll of a device flow. */
  const pollOnce = (hash: string) => postResult({ hash })
  const progressOf = async (hash: string) =>
    (await (await fetch(`${broker.url}/hash-check?hash=${hash}`)).json()) as {
      progress: string
      error?: { code: string }
    }
  /** The broker's log since `from` once it has `line`: stderr is read through a pipe, and may come after the answer. */
  const loggedSince = (from: number, line: RegExp) =>
    waitFor(
      async () => {
        const log = broker.stderr().slice(from)
        return line.test(log) && log
      },
      5000,
      `the log line ${line}`,
    )
  const noSecretIn = (log: string, fault: string) => {
    expect(log).not.toContain(`at-${fault}`)
    expect(log).not.toContain(`rt-${fault}`)
    expect(log).not.toContain('the-code')
  }

  describe.each(LASTING)('Redis %s', (_what, fault) => {
    it('delivers the tokens by query, logging a warning without them; the flow is recorded completed once the store is back', async () => {
      const { end, got, from, hash, reload } = await walk(fault, 'query')
      expect(end.body).toBe('app got it')
      expect(got).toHaveLength(1)
      expect(got[0]!.query).toMatchObject({ access_token: `at-${fault}`, state: `app-${fault}` })
      const log = await loggedSince(from, /the store did not take the completed flow; delivering it all the same/)
      noSecretIn(log, fault)
      // Within the lease the broker writes the end it could not write then: a reload tells the app nothing more.
      await waitFor(async () => (await progressOf(hash)).progress === 'completed', 10_000, 'the flow completed')
      const again = await reload()
      expect(again.status).toBe(409)
      expect(again.got).toHaveLength(1)
    }, 30_000)

    it('delivers the tokens by form_post', async () => {
      const { end } = await walk(fault, 'form_post')
      expect(end.status).toBe(200)
      expect(end.body).toContain(`name="access_token" value="at-${fault}"`)
    }, 30_000)
  })

  it.each([
    ['a refusal ends', 'refuse-short'],
    ['Redis answers again', 'hang-short'],
  ])(
    'delivers by code once %s within store.timeout: the code redeems the tokens',
    async (_what, fault) => {
      const { got, log } = await walk(fault, 'code')
      expect(got).toHaveLength(1)
      const code = got[0]!.query.result
      expect(code, JSON.stringify(got[0]!.query)).toBeTruthy()
      expect(await redeem(code!)).toMatchObject({ status: 200, body: { access_token: `at-${fault}` } })
      noSecretIn(log, fault)
    },
    30_000,
  )

  it('delivers by code a result the master kept without the replica, with a warning; the code redeems the tokens while the replica still lags', async () => {
    let redeemed: Awaited<ReturnType<typeof redeem>> | undefined
    const { got, log } = await walk('unreplicated', 'code', async (got) => {
      // The GETDEL took the result from the master: refused for want of the replica, it would be gone for good.
      redeemed = await redeem(got[0]?.query.result ?? 'none')
    })
    expect(got).toHaveLength(1)
    expect(got[0]!.query.result, JSON.stringify(got[0]!.query)).toBeTruthy()
    expect(log).toMatch(/kept without the replicas store\.replicas asks for/)
    noSecretIn(log, 'unreplicated')
    expect(redeemed).toMatchObject({ status: 200, body: { access_token: 'at-unreplicated' } })
    expect(await redeem(got[0]!.query.result!)).toMatchObject({ status: 404 })
  }, 30_000)

  it('tells the app RESULT_NOT_KEPT, once, when Redis refuses the code for all of store.timeout', async () => {
    const { end, got, hash, reload } = await walk('refuse', 'code')
    expect(end.body).toBe('app got it')
    expect(got).toHaveLength(1)
    expect(got[0]!.query).toMatchObject({
      error: 'server_error',
      broker_error: 'RESULT_NOT_KEPT',
      state: 'app-refuse',
    })
    // Redis takes writes again: the flow is recorded failed, not left exchanging to be failed once more by its lease.
    await waitFor(async () => (await progressOf(hash)).error?.code === 'RESULT_NOT_KEPT', 10_000, 'the flow failed')
    const again = await reload()
    expect(again.status).toBe(409)
    expect(again.got).toHaveLength(1)
  }, 30_000)

  // The device flow's poll ends the flow as a /callback does: the provider has redeemed the device code
  // (it gives no tokens twice), so the poll's answer carries the tokens whatever the store did.
  describe.each(LASTING)("Redis %s after a device flow's poll got the tokens", (_what, fault) => {
    it('answers the poll with the tokens, logging a warning without them; the flow is recorded completed once the store is back', async () => {
      const { hash } = await storeAt(broker.url, {
        auth_flow: 'device',
        auth_version: '2',
        client_id: 'c',
        client_auth: 'none',
        device_authorization_url: `${providerUrl}/device`,
        access_url: `${providerUrl}/token/${fault}`,
      })
      const logged = broker.stderr().length
      const { status, body } = await pollOnce(hash).finally(healNow)
      expect(status, JSON.stringify(body)).toBe(200)
      expect(body).toMatchObject({ access_token: `at-${fault}`, refresh_token: `rt-${fault}` })
      const log = await loggedSince(logged, /the store did not take the completed flow; delivering it all the same/)
      noSecretIn(log, fault)
      expect(log).not.toContain('the-device-code')
      // The end it could not write then is written once the store is back: the next poll is refused, not run.
      await waitFor(async () => (await progressOf(hash)).progress === 'completed', 10_000, 'the flow completed')
      expect((await pollOnce(hash)).status).toBe(409)
    }, 30_000)
  })

  // Before the exchange: the /callback's own move to `exchanging` is carried out on the master but no
  // replica acknowledges it, so it answers 503. The provider was not called: the move is undone first, so
  // the flow waits for its callback again and the reload, once the replica is back, runs the exchange.
  it('a /callback while the replica lags answers 503; the reload once it is back completes the flow with its tokens', async () => {
    lagAtAuthorize = true
    const { got, hash, reload } = await walk('none', 'query', async (_got, first, browser) => {
      expect(first.status, first.body).toBe(503)
      expect(new URL(first.url).pathname).toBe('/callback')
      await healNow()
      await waitFor(async () => (await admin.wait(1, 100)) === 1, 10_000, 'the replica acknowledging again')
      expect((await browser.go(first.url)).body).toBe('app got it')
    })
    expect(got).toHaveLength(1)
    expect(got[0]!.query).toMatchObject({ access_token: 'at-none', state: 'app-none' })
    expect((await progressOf(hash)).progress).toBe('completed')
    const again = await reload()
    expect(again.status).toBe(409)
    expect(again.got).toHaveLength(1)
  }, 30_000)

  // /start's own write is carried out on the master but no replica acknowledges it, so /start answers 503
  // and the browser is not sent on: the claim (stored → awaiting_callback, its first step ran at /store), or
  // the write of a first step that runs at /start (a pushed authorization request: the replica is stopped as
  // the provider's PAR endpoint answers). The flow is put back as /store left it first: the browser's retry,
  // once the replica is back, starts the flow, and the start URL still works once.
  it.each([
    ['its claim', { par: false }],
    ["its first step's write", { par: true }],
  ])(
    'a /start while the replica lags, %s, answers 503; the retry once it is back runs the flow, one delivery',
    async (what, extra) => {
      const appState = `start-lagging-${extra.par ? 'par' : 'claim'}`
      const par: Record<string, string> = extra.par ? { par: 'true', par_url: `${providerUrl}/par` } : {}
      const { url, hash } = await storeAt(broker.url, record('none', appState, par))
      const browser = new Browser()
      if (extra.par) lagAtPar = true
      else {
        signal(replica, 'SIGSTOP')
        heal = async () => signal(replica, 'SIGCONT')
      }
      try {
        const first = await browser.go(url)
        expect(first.status, first.body).toBe(503)
        expect(new URL(first.url).pathname).toBe('/start')
      } finally {
        await healNow()
      }
      // The master (and the replica after it) hold the flow as /store left it.
      expect((await progressOf(hash)).progress, what).toBe('stored')
      const got = () => app.received.filter((r) => r.query.state === appState)
      // The browser retries once the page says to: the replica is back by then (a write acknowledged).
      await waitFor(async () => (await admin.wait(1, 100)) === 1, 10_000, 'the replica acknowledging again')
      const retry = await browser.go(url)
      expect(retry.body).toBe('app got it')
      expect(got()).toHaveLength(1)
      expect(got()[0]!.query).toMatchObject({ access_token: 'at-none' })
      // Still once: the start URL opened again after the flow ran answers 409 and tells the app nothing.
      expect((await browser.go(url)).status).toBe(409)
      expect(got()).toHaveLength(1)
    },
    30_000,
  )

  // The first step at /start fails (the provider refuses the pushed request) and the flow's move to `failed`
  // is not acknowledged: the provider has answered, so the app is told the error all the same, once (settle.ts),
  // rather than a 503 with the flow failed on the master, its reload 409 FLOW_FINISHED and the app never told.
  it('a first step that fails while the replica lags tells the app its error, once', async () => {
    const appState = 'start-par-refused'
    const { url } = await storeAt(broker.url, record('none', appState, { par: 'true', par_url: `${providerUrl}/par` }))
    const logged = broker.stderr().length
    const browser = new Browser()
    lagAtPar = parRefuses = true
    let first: BrowseResult
    try {
      first = await browser.go(url)
    } finally {
      await healNow()
    }
    expect(first.body).toBe('app got it')
    const got = app.received.filter((r) => r.query.state === appState)
    expect(got).toHaveLength(1)
    expect(got[0]!.query).toMatchObject({ error: 'invalid_request', broker_error: 'PROVIDER_ERROR' })
    expect(
      await loggedSince(logged, /the store did not take the failed flow; telling the app all the same/),
    ).toBeTruthy()
    expect((await browser.go(url)).status).toBe(409)
    expect(app.received.filter((r) => r.query.state === appState)).toHaveLength(1)
  }, 30_000)
})
