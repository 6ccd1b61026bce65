import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type CallbackApp, startCallbackApp } from './helpers/app.js'
import { type BrokerProcess, runCli, startBroker } from './helpers/broker.js'
import { Browser } from './helpers/browser.js'
import { storeAt } from './helpers/flow-suite.js'
import { CLIENT_SECRET, passInteractions, type StrictProvider, startStrictProvider } from './helpers/oidc-provider.js'
import { freePort } from './helpers/ports.js'

// End to end: `broker serve` against panva's oidc-provider 9, configured strictly (see the helper).
let broker: BrokerProcess
let op: StrictProvider
let app: CallbackApp

beforeAll(async () => {
  const [brokerPort, opPort] = await Promise.all([freePort(), freePort()])
  ;[op, app] = await Promise.all([
    startStrictProvider(opPort, `http://localhost:${brokerPort}/callback`),
    startCallbackApp(),
  ])
  broker = await startBroker({ port: brokerPort, args: ['--store', 'memory'] })
}, 30_000)

afterAll(async () => {
  await broker?.stop()
  await Promise.all([op?.stop(), app?.close()])
})

const lastDelivery = () => app.received.at(-1)!.query

/** Stores `record`, runs it in a browser through the provider's login and consent, returns what the app got. */
async function runFlow(record: Record<string, unknown>): Promise<{ hash: string; got: Record<string, string> }> {
  const { hash, url } = await storeAt(broker.url, record as Record<string, string>)
  const browser = new Browser()
  const res = await passInteractions(browser, await browser.go(url))
  expect(res.body).toBe('app got it')
  return { hash, got: lastDelivery() }
}

const oidcRecord = (client: Record<string, unknown>) => ({
  auth_version: '2',
  auth_leg: '3',
  issuer: op.issuer,
  scope: 'openid',
  callback: app.callback,
  state: 'app-state',
  ...client,
})

async function refreshWorks(client: Record<string, unknown>, refreshToken: string): Promise<void> {
  const { hash } = await storeAt(broker.url, {
    auth_version: '2',
    auth_leg: '2',
    grant_type: 'refresh_token',
    refresh_token: refreshToken,
    issuer: op.issuer,
    ...client,
  } as Record<string, string>)
  const res = await fetch(`${broker.url}/start?hash=${hash}`)
  const body = (await res.json()) as Record<string, unknown>
  expect(res.status, JSON.stringify(body)).toBe(200)
  expect(body.access_token).toBeTruthy()
  // Rotation: the provider hands out a new refresh token and the old one is spent.
  expect(body.refresh_token).toBeTruthy()
  expect(body.refresh_token).not.toBe(refreshToken)
  expect(body.id_token_verified).toBe(true)
  const userinfo = await fetch(`${op.issuer}/me`, { headers: { authorization: `Bearer ${String(body.access_token)}` } })
  expect(userinfo.status).toBe(200)
  expect(((await userinfo.json()) as { sub: string }).sub).toBe('alice')
}

describe('OpenID Connect against a strict oidc-provider', () => {
  it.each([
    ['client_secret_basic', { client_id: 'basic-client', client_secret: CLIENT_SECRET, client_auth: 'basic' }],
    ['client_secret_post', { client_id: 'post-client', client_secret: CLIENT_SECRET }],
    ['none (public client)', { client_id: 'public-client', client_auth: 'none' }],
    [
      'client_secret_jwt',
      { client_id: 'secret-jwt-client', client_secret: CLIENT_SECRET, client_auth: 'client_secret_jwt' },
    ],
  ])(
    'completes with %s from the issuer alone, verifies the id_token, and the refreshed token works',
    async (_, client) => {
      const { got } = await runFlow(oidcRecord(client))
      expect(got.access_token).toBeTruthy()
      expect(got.id_token).toMatch(/^ey/)
      expect(got.id_token_verified).toBe('true')
      expect(got.state).toBe('app-state')
      await refreshWorks(client, got.refresh_token!)
    },
  )

  it("delivers the user's profile from the userinfo endpoint the metadata names (profile: true)", async () => {
    const { got } = await runFlow(
      oidcRecord({ client_id: 'basic-client', client_secret: CLIENT_SECRET, client_auth: 'basic', profile: true }),
    )
    expect(got.id_token_verified).toBe('true')
    expect(JSON.parse(got.profile!)).toEqual({ sub: 'alice' })
  })

  it('completes with private_key_jwt (PEM, then the same key as a JWK object)', async () => {
    const pem = { client_id: 'jwt-client', client_auth: 'private_key_jwt', private_key: op.clientKeyPem }
    const { got, hash } = await runFlow(oidcRecord(pem))
    expect(got.id_token_verified).toBe('true')
    await refreshWorks(pem, got.refresh_token!)
    // The private key is a secret: never shown back.
    const check = (await (await fetch(`${broker.url}/hash-check?hash=${hash}`)).json()) as {
      record: Record<string, unknown>
      id_token_verified: boolean
    }
    expect(check.record.private_key).toBe('[redacted]')
    expect(check.id_token_verified).toBe(true)

    const jwk = { ...pem, private_key: op.clientKey.export({ format: 'jwk' }) }
    const second = await runFlow(oidcRecord(jwk))
    expect(second.got.id_token_verified).toBe('true')
  })

  it('pushes the authorization request (PAR) at /start, not at /store, for a client that must', async () => {
    const record = oidcRecord({
      client_id: 'par-client',
      client_secret: CLIENT_SECRET,
      client_auth: 'basic',
      par: true,
    })
    const { url } = await storeAt(broker.url, record as Record<string, string>)
    const pushesBefore = op.requests.filter((r) => r === 'POST /request').length
    const browser = new Browser()
    const first = await browser.go(url)
    expect(op.requests.filter((r) => r === 'POST /request').length).toBe(pushesBefore + 1)
    // The browser carried only client_id and request_uri to the provider.
    const toProvider = new URL(first.hops[0]!.location!)
    expect([...toProvider.searchParams.keys()].sort()).toEqual(['client_id', 'request_uri'])
    const res = await passInteractions(browser, first)
    expect(res.body).toBe('app got it')
    expect(lastDelivery().id_token_verified).toBe('true')
    expect(lastDelivery().access_token).toBeTruthy()
  })

  it('broker store --par stores par and the flow pushes, as --field par=true does', async () => {
    const args = [
      ...['store', '--flow', 'oauth2-3', '--issuer', op.issuer, '--client-id', 'par-client'],
      ...['--client-secret', CLIENT_SECRET, '--client-auth', 'basic', '--scope', 'openid'],
      ...['--callback', app.callback, '--par', '--json'],
    ]
    const { code, stdout, stderr } = await runCli(args, { env: { BROKER_URL: broker.url } })
    expect(code, stderr).toBe(0)
    const { hash, url } = JSON.parse(stdout) as { hash: string; url: string }
    const check = (await (await fetch(`${broker.url}/hash-check?hash=${hash}`)).json()) as {
      record: Record<string, unknown>
    }
    expect(check.record.par).toBe('true')
    const pushesBefore = op.requests.filter((r) => r === 'POST /request').length
    const browser = new Browser()
    const first = await browser.go(url)
    expect(op.requests.filter((r) => r === 'POST /request').length).toBe(pushesBefore + 1)
    expect([...new URL(first.hops[0]!.location!).searchParams.keys()].sort()).toEqual(['client_id', 'request_uri'])
    expect((await passInteractions(browser, first)).body).toBe('app got it')
    expect(lastDelivery().access_token).toBeTruthy()
  })

  it('without PAR, that client is refused by the provider and the app is told', async () => {
    const record = oidcRecord({ client_id: 'par-client', client_secret: CLIENT_SECRET, client_auth: 'basic' })
    const { url } = await storeAt(broker.url, record as Record<string, string>)
    const res = await new Browser().go(url)
    // The provider refuses to the redirect_uri, which is the broker's callback: the app gets the provider's error.
    expect(res.body).toBe('app got it')
    expect(lastDelivery().error).toBe('invalid_request')
    expect(lastDelivery().access_token).toBeUndefined()
  })

  it('passes an id_token on with id_token_verified=false when the record names no issuer nor jwks_uri', async () => {
    const record = {
      auth_version: '2',
      auth_leg: '3',
      client_id: 'post-client',
      client_secret: CLIENT_SECRET,
      authorize_url: `${op.issuer}/auth`,
      access_url: `${op.issuer}/token`,
      scope: 'openid',
      callback: app.callback,
    }
    const { got, hash } = await runFlow(record)
    expect(got.id_token).toMatch(/^ey/)
    expect(got.id_token_verified).toBe('false')
    const check = (await (await fetch(`${broker.url}/hash-check?hash=${hash}`)).json()) as Record<string, unknown>
    expect(check.id_token_verified).toBe(false)
  })

  it('verifies with the record jwks_uri alone (no issuer: iss is not checked, the signature and aud are)', async () => {
    const { got } = await runFlow({
      auth_version: '2',
      auth_leg: '3',
      client_id: 'post-client',
      client_secret: CLIENT_SECRET,
      authorize_url: `${op.issuer}/auth`,
      access_url: `${op.issuer}/token`,
      jwks_uri: `${op.issuer}/jwks`,
      scope: 'openid',
      callback: app.callback,
    })
    expect(got.id_token_verified).toBe('true')
  })
})

describe('/store checks of client authentication and discovery', () => {
  const store = (record: Record<string, unknown>) =>
    fetch(`${broker.url}/store`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ auth_version: '2', auth_leg: '3', client_id: 'c', ...record }),
    }).then(async (res) => ({
      status: res.status,
      body: (await res.json()) as { code: string; message: string; fields: Record<string, string> },
    }))

  it.each(['tls_client_auth', 'nonsense'])('refuses client_auth %s with 400 VALIDATION naming the field', async (v) => {
    const res = await store({ issuer: op.issuer, client_secret: 's', client_auth: v })
    expect(res.status).toBe(400)
    expect(res.body.code).toBe('VALIDATION')
    expect(Object.keys(res.body.fields)).toEqual(['client_auth'])
  })

  it('refuses private_key_jwt without a usable private_key', async () => {
    const none = await store({ issuer: op.issuer, client_auth: 'private_key_jwt' })
    expect(none.body.fields).toEqual({ private_key: 'is required when client_auth is private_key_jwt' })
    const bad = await store({ issuer: op.issuer, client_auth: 'private_key_jwt', private_key: 'not a key' })
    expect(bad.status).toBe(400)
    expect(bad.body.fields.private_key).toMatch(/PEM private key or a private JWK/)
  })

  it('refuses par: true with neither a par_url nor an issuer whose metadata names one', async () => {
    const res = await store({ authorize_url: `${op.issuer}/auth`, access_url: `${op.issuer}/token`, par: true })
    expect(res.status).toBe(400)
    expect(res.body.fields).toEqual({ par_url: 'is required to push authorization requests' })
  })

  it('answers 502 naming the issuer when discovery fails', async () => {
    const nowhere = `http://127.0.0.1:${await freePort()}`
    const res = await store({ issuer: nowhere, client_secret: 's' })
    expect(res.status).toBe(502)
    expect(res.body.code).toBe('PROVIDER_ERROR')
    expect(res.body.message).toContain(nowhere)
    const missing = await store({ issuer: `${op.issuer}/not-an-issuer`, client_secret: 's' })
    expect(missing.status).toBe(502)
    expect(missing.body.message).toMatch(/Discovery for .*not-an-issuer failed: .*answered 404/)
  })

  it('lets explicit record fields win over discovered ones', async () => {
    const { url } = await storeAt(broker.url, {
      auth_version: '2',
      auth_leg: '3',
      client_id: 'post-client',
      issuer: op.issuer,
      authorize_url: 'http://127.0.0.1:9/elsewhere',
      callback: app.callback,
    })
    const res = await fetch(url, { redirect: 'manual' })
    expect(res.headers.get('location')).toMatch(/^http:\/\/127\.0\.0\.1:9\/elsewhere\?/)
  })
})
