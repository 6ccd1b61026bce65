import { generateKeyPairSync } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startCallbackApp, type CallbackApp } from './helpers/app.js'
import { type BrokerProcess, startBroker } from './helpers/broker.js'
import { Browser } from './helpers/browser.js'
import { baseString, type OAuth1Provider, type Quirk, startOAuth1Provider } from './helpers/oauth1-provider.js'
import { type RedisServer, startRedis } from './helpers/redis.js'

const METHODS = ['HMAC-SHA1', 'HMAC-SHA256', 'RSA-SHA1', 'PLAINTEXT'] as const
type Method = (typeof METHODS)[number]

let redis: RedisServer
let provider: OAuth1Provider
let app: CallbackApp
let broker: BrokerProcess
const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 })
const pem = rsa.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()
const secrets: string[] = [pem]

/** The consumer fields of a record for `method`; each method has its own consumer at the provider. */
function consumer(method: Method, quirk?: Quirk): Record<string, string> {
  const key = `ck-${method}${quirk ? `-${quirk}` : ''}`
  if (method === 'RSA-SHA1') {
    provider.addConsumer({ key, publicKey: rsa.publicKey, quirk })
    return { consumer_key: key, signature_method: method, private_key: pem }
  }
  const secret = `cs-${method}-${quirk ?? 'ok'}-s3cr3t`
  secrets.push(secret)
  provider.addConsumer({ key, secret, quirk })
  return { consumer_key: key, consumer_secret: secret, signature_method: method }
}

const endpoints = () => ({
  request_url: provider.requestUrl,
  authorize_url: provider.authorizeUrl,
  access_url: provider.accessUrl,
})

async function store(record: Record<string, string>): Promise<Response> {
  return fetch(`${broker.url}/store`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(record),
  })
}

async function stored(record: Record<string, string>): Promise<{ hash: string; url: string }> {
  const res = await store(record)
  expect(res.status, await res.clone().text()).toBe(200)
  return (await res.json()) as { hash: string; url: string }
}

/** Runs a 3-legged flow in a browser and returns what the app's callback received. */
async function threeLegged(method: Method): Promise<Record<string, string>> {
  const { url } = await stored({
    auth_version: '1',
    auth_leg: '3',
    ...consumer(method),
    ...endpoints(),
    callback: app.callback,
    state: 'app-state',
  })
  const res = await new Browser().go(url)
  expect(res.status, res.body).toBe(200)
  // start → provider authorize → broker callback → app
  expect(res.hops.map((h) => h.status)).toEqual([302, 302, 302, 200])
  return app.received.at(-1)!.query
}

/** A consumer of `method` and the access token a 3-legged flow got for it: the credentials of a record that signs. */
async function signedIn(method: Method): Promise<Record<string, string>> {
  const got = await threeLegged(method)
  return { ...consumer(method), oauth_token: got.access_token!, oauth_token_secret: got.access_secret! }
}

/** Asks the broker's signing helper to sign a request; returns the JSON answer and the header. */
async function sign(
  hash: string,
  request: Record<string, unknown>,
  path = '/start',
): Promise<{ status: number; json: Record<string, unknown>; header: string | null }> {
  const res = await fetch(`${broker.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ hash, ...request }),
  })
  return {
    status: res.status,
    json: (await res.json()) as Record<string, unknown>,
    header: res.headers.get('authorization'),
  }
}

beforeAll(async () => {
  ;[redis, provider, app] = await Promise.all([startRedis(), startOAuth1Provider(), startCallbackApp()])
  broker = await startBroker({
    args: ['--store', 'redis', '--store-port', String(redis.port)],
    env: { BROKER_LOG_LEVEL: 'info' },
  })
})

afterAll(async () => {
  await broker?.stop()
  await Promise.all([redis?.stop(), provider?.stop(), app?.close()])
})

describe('the test provider', () => {
  it('computes the RFC 5849 §3.4.1.1 base string on its own', () => {
    const pairs: [string, string][] = [
      ['b5', '=%3D'],
      ['a3', 'a'],
      ['c@', ''],
      ['a2', 'r b'],
      ['c2', ''],
      ['a3', '2 q'],
      ['oauth_consumer_key', '9djdj82h48djs9d2'],
      ['oauth_token', 'kkk9d7dh3k39sjv7'],
      ['oauth_signature_method', 'HMAC-SHA1'],
      ['oauth_timestamp', '137131201'],
      ['oauth_nonce', '7d8f3e4a'],
    ]
    expect(baseString('POST', 'EXAMPLE.com:80', '/request', pairs)).toBe(
      'POST&http%3A%2F%2Fexample.com%2Frequest&a2%3Dr%2520b%26a3%3D2%2520q%26a3%3Da%26b5%3D%253D%25253D%26c%2540%3D%26c2%3D%26oauth_consumer_key%3D9djdj82h48djs9d2%26oauth_nonce%3D7d8f3e4a%26oauth_signature_method%3DHMAC-SHA1%26oauth_timestamp%3D137131201%26oauth_token%3Dkkk9d7dh3k39sjv7',
    )
  })

  it('refuses an unsigned or tampered request', async () => {
    expect((await fetch(provider.resourceUrl)).status).toBe(401)
    const res = await fetch(provider.requestUrl, {
      method: 'POST',
      headers: { authorization: 'OAuth oauth_consumer_key="nobody", oauth_signature="x"' },
    })
    expect(res.status).toBe(401)
  })
})

describe.each(METHODS)('OAuth 1.0a with %s', (method) => {
  it('runs 3-legged through the browser and delivers access_token, access_secret and the extra fields', async () => {
    const got = await threeLegged(method)
    expect(got.access_token).toMatch(/^at-/)
    expect(got.access_secret).toBe(provider.accessTokens.get(got.access_token!)?.secret)
    expect(got).toMatchObject({ user_id: '42', screen_name: 'alice', state: 'app-state' })
    expect(got.oauth_token).toBeUndefined()
    secrets.push(got.access_secret!)
    const signedBy = provider.log.filter((v) => v.ok && v.path.startsWith('/oauth/')).slice(-2)
    expect(signedBy.map((v) => [v.path, v.signatureMethod])).toEqual([
      ['/oauth/request_token', method],
      ['/oauth/access_token', method],
    ])
  })

  it('runs 2-legged and answers JSON without a callback', async () => {
    const { url } = await stored({
      auth_version: '1',
      auth_leg: '2',
      ...consumer(method),
      request_url: provider.requestUrl,
      access_url: provider.accessUrl,
    })
    const res = await fetch(url)
    expect(res.status).toBe(200)
    const got = (await res.json()) as Record<string, string>
    expect(got.access_secret).toBe(provider.accessTokens.get(got.access_token!)?.secret)
    expect(got.screen_name).toBe('alice')
    secrets.push(got.access_secret!)
  })

  it('signs 1-legged resource requests the provider accepts, with query, form body and parameters', async () => {
    const { hash } = await stored({
      auth_version: '1',
      auth_leg: '1',
      ...(await signedIn(method)),
    })
    // An uppercase host and an explicit default-free port: the base string must normalize both sides alike.
    const target = `${provider.resourceUrl.replace('127.0.0.1', 'LOCALHOST')}?page=2&q=a+b%21`
    const body = 'status=hello%20world&tag=x&tag=%E2%9C%93'
    // POST /sign takes `parameters` as an object; /start (flat fields) as JSON text or a query string.
    for (const [path, parameters] of [
      ['/sign', { extra: 'v*1' }],
      ['/start', 'extra=v%2A1'],
    ] as const) {
      const signed = await sign(hash, { url: target, method: 'post', body, parameters }, path)
      expect(signed.status, JSON.stringify(signed.json)).toBe(200)
      expect(signed.json.authorization).toMatch(/^OAuth /)
      expect(signed.header).toBe(signed.json.authorization)
      const res = await fetch(`${target}&extra=v*1`, {
        method: 'POST',
        headers: {
          authorization: String(signed.json.authorization),
          'content-type': 'application/x-www-form-urlencoded',
        },
        body,
      })
      expect(res.status, await res.clone().text()).toBe(200)
      const answer = (await res.json()) as { user: string; params: [string, string][] }
      expect(answer.user).toBe('alice')
      expect(answer.params).toEqual(
        expect.arrayContaining([
          ['status', 'hello world'],
          ['tag', '✓'],
          ['q', 'a b!'],
          ['extra', 'v*1'],
        ]),
      )
    }

    // The same stored record signs again (reusable); a header is good for its one request only.
    const again = await sign(hash, { url: provider.resourceUrl, method: 'GET' })
    expect(again.status).toBe(200)
    const ok = await fetch(provider.resourceUrl, { headers: { authorization: String(again.json.authorization) } })
    expect(ok.status).toBe(200)
    const replay = await fetch(provider.resourceUrl, { headers: { authorization: String(again.json.authorization) } })
    expect(replay.status).toBe(401)
  })

  it('signs OAuth Echo values a third party can verify', async () => {
    const { url } = await stored({
      auth_flow: 'echo',
      auth_version: '1',
      ...(await signedIn(method)),
      verify_url: provider.verifyUrl,
      realm: 'http://api.example.com/',
    })
    const res = await fetch(url)
    expect(res.status).toBe(200)
    const echo = (await res.json()) as Record<string, string>
    expect(echo.x_auth_service_provider).toBe(provider.verifyUrl)
    expect(res.headers.get('x-auth-service-provider')).toBe(provider.verifyUrl)
    expect(res.headers.get('x-verify-credentials-authorization')).toBe(echo.x_verify_credentials_authorization)
    expect(echo.x_verify_credentials_authorization).toMatch(/^OAuth realm="http:\/\/api.example.com\/", oauth_/)
    // What the delegator does with the two values:
    const verified = await fetch(echo.x_auth_service_provider!, {
      headers: { authorization: echo.x_verify_credentials_authorization! },
    })
    expect(verified.status).toBe(200)
    expect(((await verified.json()) as { screen_name: string }).screen_name).toBe('alice')
  })
})

describe('OAuth 1.0a details', () => {
  it('delivers with form_post, keeping the tokens out of URLs', async () => {
    const { url } = await stored({
      auth_version: '1',
      auth_leg: '3',
      ...consumer('HMAC-SHA1'),
      ...endpoints(),
      callback: app.callback,
      delivery: 'form_post',
    })
    const browser = new Browser()
    const res = await browser.go(url)
    expect(res.status).toBe(200)
    expect(res.body).toContain('<form method="post"')
    const access = /name="access_token" value="([^"]+)"/.exec(res.body)?.[1]
    expect(provider.accessTokens.has(access!)).toBe(true)
    expect(res.hops.every((h) => !h.location?.includes('access'))).toBe(true)
  })

  it('delivers by one-time code (redeemed once with POST /result), and as JSON with callback oob', async () => {
    const { url } = await stored({
      auth_version: '1',
      auth_leg: '3',
      ...consumer('HMAC-SHA1'),
      ...endpoints(),
      callback: app.callback,
      delivery: 'code',
      state: 'c1',
    })
    const res = await new Browser().go(url)
    expect(res.body).toBe('app got it')
    const got = app.received.at(-1)!.query
    expect(got).toMatchObject({ state: 'c1' })
    expect(got.access_token).toBeUndefined()
    const redeem = () =>
      fetch(`${broker.url}/result`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ result: got.result }),
      })
    const first = await redeem()
    const result = (await first.json()) as Record<string, string>
    expect(result).toMatchObject({ screen_name: 'alice', state: 'c1' })
    expect(result.access_secret).toBe(provider.accessTokens.get(result.access_token!)?.secret)
    expect((await redeem()).status).toBe(404)

    const oob = await stored({
      auth_version: '1',
      auth_leg: '3',
      ...consumer('HMAC-SHA1'),
      ...endpoints(),
      callback: 'oob',
    })
    const json = await new Browser().go(oob.url)
    expect(json.status).toBe(200)
    expect(json.headers.get('content-type')).toMatch(/json/)
    expect(JSON.parse(json.body)).toMatchObject({ screen_name: 'alice', access_token: expect.stringMatching(/^at-/) })
  })

  it('reads signature_method written with "_" as the same with "-"', async () => {
    const record = consumer('HMAC-SHA256')
    const { hash, url } = await stored({
      auth_version: '1',
      auth_leg: '2',
      ...record,
      signature_method: 'hmac_sha256',
      request_url: provider.requestUrl,
      access_url: provider.accessUrl,
    })
    const check = (await (await fetch(`${broker.url}/hash-check?hash=${hash}`)).json()) as {
      record: Record<string, string>
    }
    expect(check.record.signature_method).toBe('HMAC-SHA256')
    expect(check.record.consumer_secret).toBe('[redacted]')
    expect((await fetch(url)).status).toBe(200)
    expect(provider.log.at(-1)?.signatureMethod).toBe('HMAC-SHA256')
  })

  it('signs JSON bodies without their fields, as RFC 5849 wants', async () => {
    const got = await threeLegged('HMAC-SHA1')
    const { hash } = await stored({
      auth_version: '1',
      auth_leg: '1',
      ...consumer('HMAC-SHA1'),
      access_token: got.access_token!,
      access_secret: got.access_secret!,
    })
    const body = JSON.stringify({ status: 'hi', n: 1 })
    const signed = await sign(hash, {
      url: provider.resourceUrl,
      method: 'PUT',
      body,
      content_type: 'application/json',
    })
    expect(signed.status).toBe(200)
    const res = await fetch(provider.resourceUrl, {
      method: 'PUT',
      headers: { authorization: String(signed.json.authorization), 'content-type': 'application/json' },
      body,
    })
    expect(res.status, await res.clone().text()).toBe(200)
  })

  it('delivers the signed header to the callback when the record has one', async () => {
    const { url } = await stored({
      auth_version: '1',
      auth_leg: '1',
      ...(await signedIn('HMAC-SHA1')),
      callback: app.callback,
    })
    const res = await fetch(`${url}&url=${encodeURIComponent(provider.resourceUrl)}`, { redirect: 'manual' })
    expect(res.status).toBe(302)
    const header = new URL(res.headers.get('location')!).searchParams.get('authorization')!
    expect((await fetch(provider.resourceUrl, { headers: { authorization: header } })).status).toBe(200)
  })
})

describe('OAuth 1.0a bad input', () => {
  it('names every missing field with 400 VALIDATION', async () => {
    const res = await store({ auth_version: '1', auth_leg: '3', consumer_secret: 'x' })
    expect(res.status).toBe(400)
    const body = (await res.json()) as { code: string; fields: Record<string, string> }
    expect(body.code).toBe('VALIDATION')
    expect(Object.keys(body.fields).sort()).toEqual(['access_url', 'authorize_url', 'consumer_key', 'request_url'])
  })

  it('refuses an unreadable RSA key at /store, without echoing it', async () => {
    const res = await store({
      auth_version: '1',
      auth_leg: '2',
      consumer_key: 'k',
      signature_method: 'RSA-SHA1',
      private_key: '-----BEGIN PRIVATE KEY-----\nbm9wZQ==\n-----END PRIVATE KEY-----',
      ...endpoints(),
    })
    expect(res.status).toBe(400)
    const text = await res.text()
    expect(JSON.parse(text)).toMatchObject({
      code: 'VALIDATION',
      fields: { private_key: 'is not a readable PEM private key' },
    })
    expect(text).not.toContain('bm9wZQ')
  })

  it('refuses an unknown signature method and a missing consumer_secret', async () => {
    const bad = await store({
      auth_version: '1',
      auth_leg: '1',
      consumer_key: 'k',
      consumer_secret: 's',
      signature_method: 'MD5',
    })
    expect(((await bad.json()) as { fields: Record<string, string> }).fields.signature_method).toMatch(/must be one of/)
    const noSecret = await store({ auth_version: '1', auth_leg: '1', consumer_key: 'k' })
    expect(((await noSecret.json()) as { fields: Record<string, string> }).fields).toEqual({
      consumer_secret: 'is required for HMAC-SHA1',
    })
  })

  it('answers 400 to a signing request without url and keeps the record usable', async () => {
    const { hash } = await stored({ auth_version: '1', auth_leg: '1', consumer_key: 'k', consumer_secret: 's' })
    const missing = await sign(hash, { method: 'GET' })
    expect(missing.status).toBe(400)
    expect(missing.json).toMatchObject({ code: 'VALIDATION', fields: { url: expect.stringMatching(/required/) } })
    expect((await sign(hash, { url: 'ftp://x/' })).status).toBe(400)
    expect((await sign(hash, { url: 'https://api.example.com/' })).status).toBe(200)
  })

  it('refuses POST /sign for a flow that is not a signing flow', async () => {
    const { hash } = await stored({
      auth_version: '1',
      auth_leg: '2',
      ...consumer('HMAC-SHA1'),
      request_url: provider.requestUrl,
      access_url: provider.accessUrl,
    })
    const res = await sign(hash, { url: 'https://api.example.com/' }, '/sign')
    expect(res.status).toBe(400)
    expect(res.json.fields).toEqual({ hash: 'is not the hash of a signing flow' })
    // Its start URL is not spent: the flow is still stored.
    const check = (await (await fetch(`${broker.url}/hash-check?hash=${hash}`)).json()) as { progress: string }
    expect(check.progress).toBe('stored')
  })
})

describe('OAuth 1.0a provider refusals', () => {
  const refused = async (record: Record<string, string>) => {
    const { url } = await stored({
      auth_version: '1',
      auth_leg: '3',
      ...endpoints(),
      ...record,
      callback: app.callback,
    })
    const res = await new Browser().go(url)
    expect(res.status).toBe(200)
    return app.received.at(-1)!.query
  }

  // What the app is told of each refusal: PROVIDER_ERROR with the provider's reason, and never a token.
  it.each<[string, () => Record<string, string>, Record<string, unknown>]>([
    [
      "sends a bad-signature 401 to the app with the provider's problem and advice",
      () => ({ ...consumer('HMAC-SHA1'), consumer_secret: 'wrong-secret' }),
      {
        error: 'signature_invalid',
        error_description: expect.stringMatching(
          /request token endpoint refused the request \(401 signature_invalid\): Request token refused: signature_invalid/,
        ),
      },
    ],
    [
      "sends a plain 401 to the app with the provider's message",
      () => consumer('PLAINTEXT', 'refuse'),
      {
        error: 'server_error',
        error_description: 'The request token endpoint answered 401: Consumer suspended for abuse',
      },
    ],
    [
      'refuses an answer that is not form-encoded',
      () => consumer('HMAC-SHA1', 'html'),
      {
        error: 'server_error',
        error_description:
          'The request token endpoint answered 200 with a body that is not form-encoded: Service Unavailable Try later',
      },
    ],
    [
      'refuses a request token without oauth_callback_confirmed',
      () => consumer('RSA-SHA1', 'unconfirmed'),
      { error: 'server_error', error_description: expect.stringMatching(/oauth_callback_confirmed/) },
    ],
    [
      'tells the app when the user declines at the provider (denied=<request token>)',
      () => consumer('HMAC-SHA1', 'deny'),
      { error: 'access_denied', error_description: 'The user declined the authorization at the provider' },
    ],
  ])('%s', async (_what, record, told) => {
    const got = await refused(record())
    expect(got).toMatchObject({ broker_error: 'PROVIDER_ERROR', ...told })
    expect(got.access_token).toBeUndefined()
  })

  it("answers JSON with the provider's message when there is no callback", async () => {
    const { url } = await stored({
      auth_version: '1',
      auth_leg: '2',
      ...consumer('HMAC-SHA256', 'refuse'),
      request_url: provider.requestUrl,
      access_url: provider.accessUrl,
    })
    const res = await fetch(url)
    expect(res.status).toBe(502)
    expect(await res.json()).toMatchObject({
      code: 'PROVIDER_ERROR',
      message: 'The request token endpoint answered 401: Consumer suspended for abuse',
    })
  })
})

describe('OAuth 1.0a secrets', () => {
  it("never writes a consumer secret, private key or token secret to the broker's logs", () => {
    const log = broker.stderr()
    for (const s of secrets) expect(log.includes(s), s.slice(0, 12)).toBe(false)
    expect(secrets.length).toBeGreaterThan(8)
  })
})
