import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { type CallbackApp, startCallbackApp } from './helpers/app.js'
import { type BrokerProcess, startBroker } from './helpers/broker.js'
import { redirectBack } from './helpers/code-flow.js'
import { Browser } from './helpers/browser.js'
import { storeAt } from './helpers/flow-suite.js'
import { type HandMadeProvider, startHandMadeProvider } from './helpers/hand-made-oidc.js'
import { type RedisServer, startRedis } from './helpers/redis.js'

// Issue 27, round three: what a hostile provider (or one that changes its metadata) can make of the
// broker's answers. Its codes are only ever the app's `error`; its answers are bounded in shape and
// never make a URL nobody can carry; a metadata URL is checked wherever it is used.

let broker: BrokerProcess
let app: CallbackApp
let hostile: Server
let hostileUrl = ''

/** What the hostile token endpoint answers, by the path's last segment. */
const TOKEN: Record<string, (res: ServerResponse) => void> = {
  // JSON.stringify runs out of stack long before this depth.
  deep: (res) => send(res, 200, 'application/json', `${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`),
  wide: (res) =>
    send(
      res,
      200,
      'application/json',
      JSON.stringify({
        access_token: 'at',
        ...Object.fromEntries(Array.from({ length: 40_000 }, (_, i) => [`f${i}`, i])),
      }),
    ),
  // Within the bounds, but 1,500 fields of 12 characters make a URL of more than 8 KB.
  long: (res) =>
    send(
      res,
      200,
      'application/json',
      JSON.stringify({
        access_token: 'at-long',
        ...Object.fromEntries(Array.from({ length: 1_500 }, (_, i) => [`f${i}`, 'x'.repeat(12)])),
      }),
    ),
  // A token endpoint naming a broker code as its error.
  'broker-code': (res) => send(res, 400, 'application/json', '{"error":"STORE_UNAVAILABLE","error_description":"no"}'),
}

function send(res: ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, { 'content-type': type })
  res.end(body)
}

function route(req: IncomingMessage, res: ServerResponse, raw: string): void {
  const url = new URL(req.url ?? '/', 'http://x')
  if (url.pathname === '/authorize') {
    return redirectBack(res, url.searchParams.get('redirect_uri')!, url.searchParams.get('state')!)
  }
  // RFC 9126 error answer, with a code that is the broker's own.
  if (url.pathname === '/par') return send(res, 400, 'application/json', '{"error":"STORE_UNAVAILABLE"}')
  // OAuth 1.0a Problem Reporting, with a code that is the broker's own.
  if (url.pathname === '/oauth1/request') return send(res, 401, 'text/plain', 'oauth_problem=INTERNAL')
  if (url.pathname.startsWith('/token/')) return TOKEN[url.pathname.slice('/token/'.length)]?.(res)
  void raw
  send(res, 404, 'text/plain', 'no')
}

beforeAll(async () => {
  hostile = createServer((req, res) => {
    let raw = ''
    req.on('data', (d) => (raw += d))
    req.on('end', () => route(req, res, raw))
  })
  await new Promise<void>((r) => hostile.listen(0, '127.0.0.1', () => r()))
  hostileUrl = `http://127.0.0.1:${(hostile.address() as { port: number }).port}`
  ;[app, broker] = await Promise.all([startCallbackApp(), startBroker({ args: ['--store', 'memory'] })])
})

afterAll(async () => {
  await broker?.stop()
  await app?.close()
  hostile?.closeAllConnections()
  await new Promise((r) => hostile?.close(r))
})

const threeLegged = (token: string, extra: Record<string, string> = {}) => ({
  auth_version: '2',
  auth_leg: '3',
  client_id: 'c',
  authorize_url: `${hostileUrl}/authorize`,
  access_url: `${hostileUrl}/token/${token}`,
  callback: app.callback,
  state: 'app-state',
  ...extra,
})

/** Runs a stored flow in a cookie-keeping client; the app's last delivery (query, or the posted form). */
async function delivered(url: string): Promise<Record<string, string>> {
  const before = app.received.length
  const res = await new Browser().go(url)
  if (res.headers.get('content-type')?.startsWith('text/html')) {
    // form_post: the page's fields, as the browser would post them.
    const fields: Record<string, string> = {}
    for (const m of res.body.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g)) fields[m[1]!] = m[2]!
    return fields
  }
  expect(res.body, res.body.slice(0, 300)).toBe('app got it')
  expect(app.received.length).toBe(before + 1)
  return app.received.at(-1)!.query
}

const hashCheck = async (hash: string) =>
  (await (await fetch(`${broker.url}/hash-check?hash=${hash}`)).json()) as {
    progress: string
    error?: { code: string; error: string; description: string }
  }

describe("a provider's code is the app's `error` only: broker_error and the status are the broker's", () => {
  it('a PAR refusal {"error":"STORE_UNAVAILABLE"} reaches the app as error=STORE_UNAVAILABLE, broker_error=PROVIDER_ERROR', async () => {
    const { url } = await storeAt(broker.url, threeLegged('x', { par: 'true', par_url: `${hostileUrl}/par` }))
    const got = await delivered(url)
    expect(got).toMatchObject({ error: 'STORE_UNAVAILABLE', broker_error: 'PROVIDER_ERROR', state: 'app-state' })
  })

  it('without a callback, a PAR refusal answers 502 PROVIDER_ERROR, not 503', async () => {
    const { callback: _none, ...record } = threeLegged('x', { par: 'true', par_url: `${hostileUrl}/par` })
    const { url } = await storeAt(broker.url, record)
    const res = await fetch(url, { redirect: 'manual' })
    expect(res.status).toBe(502)
    expect(await res.json()).toMatchObject({ code: 'PROVIDER_ERROR', error: 'STORE_UNAVAILABLE' })
  })

  it('an OAuth 1.0a oauth_problem=INTERNAL answers 502 PROVIDER_ERROR, not 500', async () => {
    const { url } = await storeAt(broker.url, {
      auth_version: '1',
      auth_leg: '2',
      consumer_key: 'ck',
      consumer_secret: 'cs',
      request_url: `${hostileUrl}/oauth1/request`,
      access_url: `${hostileUrl}/oauth1/access`,
    })
    const res = await fetch(url, { redirect: 'manual' })
    expect(res.status).toBe(502)
    expect(await res.json()).toMatchObject({ code: 'PROVIDER_ERROR', error: 'INTERNAL' })
  })

  it('a token endpoint answering {"error":"STORE_UNAVAILABLE"} is a PROVIDER_ERROR too', async () => {
    const got = await delivered((await storeAt(broker.url, threeLegged('broker-code'))).url)
    expect(got).toMatchObject({ error: 'STORE_UNAVAILABLE', broker_error: 'PROVIDER_ERROR', error_description: 'no' })
  })
})

describe('hostile answer shapes', () => {
  it('a token answer nested 100,000 deep is a provider error told to the app, and the flow is failed, not "completed"', async () => {
    const { hash, url } = await storeAt(broker.url, threeLegged('deep'))
    const got = await delivered(url)
    expect(got).toMatchObject({ error: 'server_error', broker_error: 'PROVIDER_ERROR', state: 'app-state' })
    expect(got.error_description).toMatch(/token endpoint's answer nests deeper than 32 levels/)
    expect(await hashCheck(hash)).toMatchObject({ progress: 'failed', error: { code: 'PROVIDER_ERROR' } })
  })

  it('the same without a callback answers 502, not 500', async () => {
    const { hash, url } = await storeAt(broker.url, {
      auth_version: '2',
      auth_leg: '2',
      client_id: 'c',
      access_url: `${hostileUrl}/token/deep`,
    })
    const res = await fetch(url)
    expect(res.status).toBe(502)
    expect(await res.json()).toMatchObject({ code: 'PROVIDER_ERROR' })
    expect((await hashCheck(hash)).progress).toBe('failed')
  })

  it('a token answer of 40,000 fields is a provider error, not a 700 kB Location header', async () => {
    const res = await new Browser().go((await storeAt(broker.url, threeLegged('wide'))).url)
    expect(res.hops.every((h) => (h.location ?? '').length < 8192)).toBe(true)
    const got = app.received.at(-1)!.query
    expect(got).toMatchObject({ error: 'server_error', broker_error: 'PROVIDER_ERROR' })
    expect(got.error_description).toMatch(/holds more than 2000 values/)
  })

  it('refuses a query delivery past 8 KB, telling the app to use form_post or code; form_post delivers it', async () => {
    const { hash, url } = await storeAt(broker.url, threeLegged('long'))
    const res = await new Browser().go(url)
    expect(res.hops.every((h) => (h.location ?? '').length <= 8192)).toBe(true)
    const got = app.received.at(-1)!.query
    expect(got).toMatchObject({ error: 'server_error', broker_error: 'URL_TOO_LONG', state: 'app-state' })
    expect(got.error_description).toMatch(/delivery form_post or code/)
    expect(got.access_token).toBeUndefined()
    expect(await hashCheck(hash)).toMatchObject({ progress: 'failed', error: { code: 'URL_TOO_LONG' } })

    const posted = await delivered((await storeAt(broker.url, threeLegged('long', { delivery: 'form_post' }))).url)
    expect(posted.access_token).toBe('at-long')
    expect(posted.f1499).toBe('x'.repeat(12))
  })
})

describe('OpenID Connect through authorize_params', () => {
  let hm: HandMadeProvider
  beforeAll(async () => {
    hm = await startHandMadeProvider()
  })
  afterAll(async () => {
    await hm?.stop()
  })
  beforeEach(() => {
    hm.plan = {}
  })

  const record = () => ({
    auth_version: '2',
    auth_leg: '3',
    issuer: hm.issuer,
    client_id: 'hm-client',
    client_secret: 'hm-secret',
    authorize_params: 'scope=openid%20email',
    callback: app.callback,
    state: 'app-state',
  })

  it('sends a nonce when openid comes through authorize_params rather than scope', async () => {
    const got = await delivered((await storeAt(broker.url, record())).url)
    expect(hm.authorizeRequests.at(-1)).toMatchObject({ scope: 'openid email', nonce: expect.any(String) })
    expect(got.id_token_verified).toBe('true')
  })

  it('refuses a replayed id_token (another nonce) there', async () => {
    hm.plan = { claims: { nonce: 'the-nonce-of-another-flow' } }
    const got = await delivered((await storeAt(broker.url, record())).url)
    expect(got).toMatchObject({ error: 'invalid_id_token', broker_error: 'PROVIDER_ERROR' })
    expect(got.id_token_verified).toBeUndefined()
    expect(got.id_token).toBeUndefined()
  })
})

describe('providers.allow applies to metadata wherever it is used', () => {
  let redis: RedisServer
  let hm: HandMadeProvider
  let a: BrokerProcess
  let b: BrokerProcess

  beforeAll(async () => {
    ;[redis, hm] = await Promise.all([startRedis(), startHandMadeProvider()])
    Object.assign(hm.metadata, {
      require_pushed_authorization_requests: true,
      pushed_authorization_request_endpoint: `${hm.issuer}/par`,
    })
    // Two instances on one Redis: /start on B reads the issuer's metadata afresh, as any instance
    // does once its 10-minute cache has expired.
    const args = ['--store', 'redis', '--store-port', String(redis.port), '--providers-allow', hm.issuer]
    const env = { BROKER_SESSION_SECRET: 'shared-session-secret-0123456789' }
    ;[a, b] = await Promise.all([startBroker({ args, env }), startBroker({ args, env })])
  })
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()])
    await Promise.all([redis?.stop(), hm?.stop()])
  })

  it('refuses an authorization endpoint the metadata names outside providers.allow after /store: no redirect there', async () => {
    const { hash } = await storeAt(a.url, {
      auth_version: '2',
      auth_leg: '3',
      issuer: hm.issuer,
      client_id: 'hm-client',
      client_secret: 'hm-secret',
      callback: app.callback,
      state: 'app-state',
    })
    hm.metadata.authorization_endpoint = 'https://evil.example/phish'
    const res = await fetch(`${b.url}/start?hash=${hash}`, { redirect: 'manual' })
    // Not to evil.example: to the app, saying why.
    const to = new URL(res.headers.get('location') ?? '')
    expect(to.origin + to.pathname).toBe(app.callback)
    expect(Object.fromEntries(to.searchParams)).toMatchObject({
      error: 'server_error',
      broker_error: 'PROVIDER_NOT_ALLOWED',
      state: 'app-state',
    })
    expect(to.searchParams.get('error_description')).toMatch(/authorize_url is not in providers\.allow/)
    // Nothing was pushed to the provider for a flow that goes nowhere.
    expect(hm.parRequests).toEqual([])
  })
})
