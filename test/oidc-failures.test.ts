import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { type CallbackApp, startCallbackApp } from './helpers/app.js'
import { type BrokerProcess, startBroker } from './helpers/broker.js'
import { Browser } from './helpers/browser.js'
import { storeAt } from './helpers/flow-suite.js'
import { type HandMadeProvider, rsaKey, startHandMadeProvider } from './helpers/hand-made-oidc.js'
import { CLIENT_SECRET, passInteractions, type StrictProvider, startStrictProvider } from './helpers/oidc-provider.js'
import { freePort } from './helpers/ports.js'

// Hand-made providers that spoil one thing at a time, and a hostile issuer that bounces the user to
// an honest one (RFC 9207 mix-up), each through `broker serve`.
let broker: BrokerProcess
let app: CallbackApp
let honest: StrictProvider
let hm: HandMadeProvider

beforeAll(async () => {
  const [brokerPort, opPort] = await Promise.all([freePort(), freePort()])
  ;[honest, app, hm] = await Promise.all([
    startStrictProvider(opPort, `http://localhost:${brokerPort}/callback`),
    startCallbackApp(),
    startHandMadeProvider(),
  ])
  broker = await startBroker({ port: brokerPort, args: ['--store', 'memory'] })
}, 30_000)

afterAll(async () => {
  await broker?.stop()
  await Promise.all([honest?.stop(), app?.close(), hm?.stop()])
})

beforeEach(() => {
  hm.plan = {}
})

const lastDelivery = () => app.received.at(-1)!.query

async function run(provider: HandMadeProvider, extra: Record<string, unknown> = {}) {
  const { url } = await storeAt(broker.url, {
    auth_version: '2',
    auth_leg: '3',
    issuer: provider.issuer,
    client_id: 'hm-client',
    client_secret: 'hm-secret',
    scope: 'openid',
    callback: app.callback,
    ...extra,
  } as Record<string, string>)
  const res = await new Browser().go(url)
  expect(res.body).toBe('app got it')
  return lastDelivery()
}

describe('id_token verification', () => {
  it('delivers a good id_token as verified (the control for the failures below)', async () => {
    const got = await run(hm)
    expect(got.access_token).toBe('hm-access')
    expect(got.id_token_verified).toBe('true')
  })

  it.each([
    ['a bad signature', () => ({ key: rsaKey() }), /signature does not verify/],
    ['a foreign aud', () => ({ claims: { aud: 'someone-else' } }), /aud/],
    ['a foreign iss', () => ({ claims: { iss: 'https://evil.example' } }), /iss/],
    [
      'an expired token',
      () => ({ claims: { iat: Math.floor(Date.now() / 1000) - 7200, exp: Math.floor(Date.now() / 1000) - 3600 } }),
      /expired/,
    ],
    ['a wrong nonce', () => ({ claims: { nonce: 'not-the-one-sent' } }), /nonce/],
    ['several audiences without azp', () => ({ claims: { aud: ['hm-client', 'other'] } }), /azp/],
  ])('ends the flow on %s: the app gets an error and no token', async (_, plan, why) => {
    hm.plan = plan()
    const got = await run(hm)
    expect(got.error).toBe('invalid_id_token')
    expect(got.broker_error).toBe('PROVIDER_ERROR')
    expect(got.error_description).toMatch(why)
    expect(got.access_token).toBeUndefined()
    expect(got.id_token).toBeUndefined()
  })

  it('sends a nonce with scope openid, and none without', async () => {
    await run(hm)
    expect(hm.authorizeRequests.at(-1)!.nonce).toMatch(/^[\w-]{32}$/)
    const got = await run(hm, { scope: 'profile' })
    expect(hm.authorizeRequests.at(-1)!.nonce).toBeUndefined()
    expect(got.access_token).toBe('hm-access')
  })

  it('refetches the JWKS once for an unknown kid after a key rotation', async () => {
    await run(hm)
    const next = rsaKey()
    hm.published.set('k2', next)
    await new Promise((r) => setTimeout(r, 1100))
    hm.plan = { key: next, kid: 'k2' }
    expect((await run(hm)).id_token_verified).toBe('true')
  })
})

describe('token requests', () => {
  it('sends JSON with body_format json and adds token_params (object or query string)', async () => {
    await run(hm, { body_format: 'json', token_params: { resource: 'https://api.example', audience: 'api' } })
    const sent = hm.tokenRequests.at(-1)!
    expect(sent.contentType).toBe('application/json')
    expect(sent.body).toMatchObject({
      grant_type: 'authorization_code',
      client_id: 'hm-client',
      client_secret: 'hm-secret',
      resource: 'https://api.example',
      audience: 'api',
    })
    await run(hm, { token_params: 'resource=https%3A%2F%2Fother.example&grant_type=password' })
    const form = hm.tokenRequests.at(-1)!
    expect(form.contentType).toBe('application/x-www-form-urlencoded')
    // The grant's own parameters win over token_params.
    expect(form.body).toMatchObject({ resource: 'https://other.example', grant_type: 'authorization_code' })
  })

  it('sends an RFC 7523 assertion for client_secret_jwt: iss = sub = client_id, aud = issuer, jti, short exp', async () => {
    await run(hm, { client_auth: 'client_secret_jwt', client_secret: CLIENT_SECRET })
    const body = hm.tokenRequests.at(-1)!.body
    expect(body.client_secret).toBeUndefined()
    expect(body.client_assertion_type).toBe('urn:ietf:params:oauth:client-assertion-type:jwt-bearer')
    const claims = JSON.parse(Buffer.from(String(body.client_assertion).split('.')[1]!, 'base64url').toString())
    expect(claims).toMatchObject({ iss: 'hm-client', sub: 'hm-client', aud: hm.issuer })
    expect(claims.jti).toBeTruthy()
    expect(claims.exp - claims.iat).toBeLessThanOrEqual(60)
  })
})

describe('RFC 9207 mix-up defence', () => {
  it("fails before redeeming when the response's iss is another issuer: the hostile token endpoint never gets the code", async () => {
    const hostile = await startHandMadeProvider()
    try {
      // The hostile issuer bounces the user to the honest one with the broker's own state, PKCE challenge and nonce.
      hostile.authorize = (q) => {
        const to = new URL(`${honest.issuer}/auth`)
        for (const [k, v] of Object.entries(q)) to.searchParams.set(k, v)
        to.searchParams.set('client_id', 'post-client')
        return to.toString()
      }
      const { url } = await storeAt(broker.url, {
        auth_version: '2',
        auth_leg: '3',
        issuer: hostile.issuer,
        client_id: 'post-client',
        client_secret: CLIENT_SECRET,
        scope: 'openid',
        callback: app.callback,
      })
      const tokenCallsBefore = honest.requests.filter((r) => r === 'POST /token').length
      const browser = new Browser()
      const res = await passInteractions(browser, await browser.go(url))
      expect(res.body).toBe('app got it')
      const got = lastDelivery()
      expect(got.error).toBe('invalid_request')
      expect(got.error_description).toContain(`not from ${hostile.issuer}`)
      expect(got.access_token).toBeUndefined()
      expect(hostile.authorizeRequests).toHaveLength(1)
      expect(hostile.tokenRequests).toHaveLength(0)
      expect(honest.requests.filter((r) => r === 'POST /token').length).toBe(tokenCallsBefore)
    } finally {
      await hostile.stop()
    }
  })

  it('fails before redeeming when the metadata promises iss and the response has none', async () => {
    const silent = await startHandMadeProvider({}, { iss: false })
    try {
      const got = await run(silent)
      expect(got.error).toBe('invalid_request')
      expect(got.error_description).toMatch(/no iss/)
      expect(silent.tokenRequests).toHaveLength(0)
    } finally {
      await silent.stop()
    }
  })
})

describe('providers.allow and discovered endpoints', () => {
  it('refuses at /store a token endpoint the metadata names outside providers.allow', async () => {
    const elsewhere = await startHandMadeProvider({ token_endpoint: 'http://127.0.0.1:9/token' })
    const strict = await startBroker({ args: ['--store', 'memory', '--providers-allow', elsewhere.issuer] })
    try {
      const res = await fetch(`${strict.url}/store`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ auth_version: '2', auth_leg: '3', issuer: elsewhere.issuer, client_id: 'c' }),
      })
      expect(res.status).toBe(400)
      const body = (await res.json()) as { code: string; fields: Record<string, string> }
      expect(body.code).toBe('VALIDATION')
      expect(body.fields).toEqual({
        access_url: 'is not in providers.allow: the issuer metadata gives http://127.0.0.1:9',
      })
    } finally {
      await strict.stop()
      await elsewhere.stop()
    }
  })
})
