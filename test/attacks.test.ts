import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type CallbackApp, startCallbackApp } from './helpers/app.js'
import { type BrokerProcess, startBroker } from './helpers/broker.js'
import { Browser } from './helpers/browser.js'
import { type OAuth2Provider, startOAuth2Provider } from './helpers/oauth2-provider.js'
import { type RedisServer, startRedis } from './helpers/redis.js'

// Each security control against the attack it exists for, on a real broker (two workers, real
// Redis) and a real OAuth 2 server. Every attack must fail; the honest path must still work.

let redis: RedisServer
let client: Redis
let provider: OAuth2Provider
let app: CallbackApp
let broker: BrokerProcess

beforeAll(async () => {
  ;[redis, provider, app] = await Promise.all([startRedis(), startOAuth2Provider(), startCallbackApp()])
  client = new Redis({ port: redis.port, host: '127.0.0.1' })
  broker = await startBroker({
    args: [
      '--store',
      'redis',
      '--store-port',
      String(redis.port),
      '--workers',
      '2',
      '--callbacks-allow',
      `${app.url}/callback`,
    ],
  })
})

afterAll(async () => {
  await broker?.stop()
  client?.disconnect()
  await Promise.all([redis?.stop(), provider?.stop(), app?.close()])
})

const flowKeys = async () => (await client.keys('broker:flow:*')).length

async function store(record: Record<string, string>): Promise<Response> {
  return fetch(`${broker.url}/store`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(record),
  })
}

const threeLegged = (extra: Record<string, string> = {}) => ({
  auth_version: '2',
  auth_leg: '3',
  client_id: 'app-client',
  client_secret: 'app-secret',
  authorize_url: provider.authorizeUrl,
  access_url: provider.tokenUrl,
  callback: app.callback,
  state: 'app-state',
  ...extra,
})

async function startUrl(extra: Record<string, string> = {}): Promise<string> {
  const res = await store(threeLegged(extra))
  expect(res.status, await res.clone().text()).toBe(200)
  return ((await res.json()) as { url: string }).url
}

/**
 * Follows redirects in `browser` (keeping its cookies) until the next URL is the broker's callback,
 * and returns that URL without visiting it: what an attacker holds after consenting at the provider.
 */
async function walkToCallback(browser: Browser, url: string): Promise<string> {
  let current = url
  for (let i = 0; i < 10; i++) {
    const cookie = await browser.jar.getCookieString(current)
    const res = await fetch(current, { redirect: 'manual', headers: cookie ? { cookie } : {} })
    for (const set of res.headers.getSetCookie()) await browser.jar.setCookie(set, current)
    const location = res.headers.get('location')
    await res.arrayBuffer()
    if (!location) throw new Error(`no redirect from ${current} (${res.status})`)
    const next = new URL(location, current)
    if (next.pathname === '/callback' && next.port === String(broker.port)) return next.toString()
    current = next.toString()
  }
  throw new Error('the provider never sent the browser back to the broker')
}

describe('open redirect: the callback allowlist', () => {
  it('refuses every look-alike of the allowed callback and stores nothing', async () => {
    const { port } = new URL(app.url)
    const attacks = [
      `${app.url}/callbackevil`,
      `${app.url}/callback/../admin`,
      `${app.url}/admin`,
      `http://localhost:${Number(port) + 1}/callback`,
      `https://localhost:${port}/callback`,
      `http://localhost.evil.example:${port}/callback`,
      `http://localhost:${port}@evil.example/callback`,
      `http://evil.example/callback?next=${app.callback}`,
      `http://evil.example/${app.callback}`,
      `//evil.example/callback`,
      'javascript:alert(document.cookie)',
      `data:text/html,<script>location='${app.callback}'</script>`,
      `http://127.0.0.1:${port}/callback`,
    ]
    const before = await flowKeys()
    for (const callback of attacks) {
      const res = await store(threeLegged({ callback }))
      expect(res.status, callback).toBe(400)
      expect(['CALLBACK_NOT_ALLOWED', 'VALIDATION'], callback).toContain(((await res.json()) as { code: string }).code)
    }
    expect(await flowKeys()).toBe(before)
    expect((await store(threeLegged({ callback: `${app.callback}/sub?x=1` }))).status).toBe(200)
  })

  it('ignores a callback smuggled into the start URL: the token goes to the stored callback only', async () => {
    const url = await startUrl()
    const received = app.received.length
    const res = await new Browser().go(`${url}&callback=${encodeURIComponent('http://evil.example/steal')}`)
    expect(res.hops.slice(1).map((h) => h.url)).not.toContainEqual(expect.stringContaining('evil.example'))
    expect(res.hops.map((h) => h.location ?? '')).not.toContainEqual(expect.stringContaining('evil.example'))
    expect(app.received.length).toBe(received + 1)
    expect(app.received.at(-1)!.query.access_token).toMatch(/^ey/)
  })
})

describe('login CSRF: the state and browser-cookie binding', () => {
  it("refuses an attacker's callback URL opened in the victim's browser; the attacker's own browser still completes", async () => {
    const attacker = new Browser()
    const callbackUrl = await walkToCallback(attacker, await startUrl())
    const received = app.received.length

    const victim = await new Browser().go(callbackUrl)
    expect(victim.status).toBe(403)
    expect(JSON.parse(victim.body).code).toBe('COOKIE_MISMATCH')
    expect(app.received.length).toBe(received)

    const own = await attacker.go(callbackUrl)
    expect(own.body).toBe('app got it')
    expect(app.received.length).toBe(received + 1)
  })

  it('refuses a forged state (not signed by this broker) before it touches the store', async () => {
    const res = await fetch(
      `${broker.url}/callback?code=x&state=${encodeURIComponent('made-up.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA')}`,
    )
    expect(res.status).toBe(400)
    expect(((await res.json()) as { code: string }).code).toBe('UNKNOWN_STATE')
  })
})

describe('replay: hashes, callbacks and result codes are single use', () => {
  it('starts a hash once, even when 8 starts race across both workers', async () => {
    const url = await startUrl()
    const answers = await Promise.all(Array.from({ length: 8 }, () => fetch(url, { redirect: 'manual' })))
    const statuses = answers.map((r) => r.status).sort()
    expect(statuses).toEqual([302, 409, 409, 409, 409, 409, 409, 409])
  })

  it('refuses a replayed callback after the flow completed, in the same browser', async () => {
    const browser = new Browser()
    const callbackUrl = await walkToCallback(browser, await startUrl())
    expect((await browser.go(callbackUrl)).body).toBe('app got it')
    const received = app.received.length
    const again = await browser.go(callbackUrl)
    expect(again.status).toBe(409)
    expect(JSON.parse(again.body).code).toBe('FLOW_FINISHED')
    expect(app.received.length).toBe(received)
  })

  it('redeems a result code once', async () => {
    await new Browser().go(await startUrl({ delivery: 'code' }))
    const { result } = app.received.at(-1)!.query
    expect(result).toBeTruthy()
    const redeem = () =>
      fetch(`${broker.url}/result`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ result }),
      })
    const [first, second] = await Promise.all([redeem(), redeem()])
    const answers = [first!, second!].sort((a, b) => a.status - b.status)
    expect(answers.map((r) => r.status)).toEqual([200, 404])
    expect(((await answers[0]!.json()) as { access_token: string }).access_token).toMatch(/^ey/)
    expect(((await answers[1]!.json()) as { code: string }).code).toBe('UNKNOWN_RESULT')
  })
})

describe('code injection: PKCE binds the code to the flow that asked for it', () => {
  it("fails a flow that is fed a code issued for another flow's challenge, and tells the app", async () => {
    // The victim's code, stolen before the victim's browser reaches the broker.
    const victimCallback = new URL(await walkToCallback(new Browser(), await startUrl()))
    const stolenCode = victimCallback.searchParams.get('code')!
    // The attacker's own flow, in the attacker's browser, with the stolen code swapped in.
    const attacker = new Browser()
    const attackerCallback = new URL(await walkToCallback(attacker, await startUrl()))
    attackerCallback.searchParams.set('code', stolenCode)
    const received = app.received.length
    const res = await attacker.go(attackerCallback.toString())
    expect(res.status).toBe(200)
    const delivered = app.received.at(-1)!.query
    expect(app.received.length).toBe(received + 1)
    expect(delivered.access_token).toBeUndefined()
    expect(delivered.error, JSON.stringify(delivered)).toBeTruthy()
    expect(delivered.state).toBe('app-state')
    expect(delivered.error_description).toMatch(/code_verifier/)
  })
})

describe('rate limits shared through Redis', () => {
  it('counts one client across two broker instances on the same Redis: 429 with Retry-After past rate.store', async () => {
    const args = [
      '--store',
      'redis',
      '--store-port',
      String(redis.port),
      '--store-prefix',
      'rl:',
      '--rate-store',
      '3',
      '--rate-window',
      '60000',
    ]
    // Two instances on one Redis and prefix share session.secret (serve refuses a second one that generated its own).
    const env = { BROKER_SESSION_SECRET: 'rate-limit-test-shared-secret-0123' }
    const [a, b] = await Promise.all([startBroker({ args, env }), startBroker({ args, env })])
    try {
      const record = JSON.stringify({ auth_version: '2', auth_leg: '2', client_id: 'c', access_url: provider.tokenUrl })
      const post = (to: BrokerProcess) =>
        fetch(`${to.url}/store`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: record })
      const statuses = [(await post(a)).status, (await post(b)).status, (await post(a)).status]
      expect(statuses).toEqual([200, 200, 200])
      const limited = await post(b)
      expect(limited.status).toBe(429)
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0)
      expect(((await limited.json()) as { code: string }).code).toBe('RATE_LIMITED')
      expect((await post(a)).status).toBe(429)
      expect((await client.keys('rl:flow:*')).length).toBe(3)
      expect((await client.keys('rl:rate:*')).length).toBeGreaterThan(0)
    } finally {
      await Promise.all([a.stop(), b.stop()])
    }
  })
})
