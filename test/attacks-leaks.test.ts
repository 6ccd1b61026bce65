import { generateKeyPairSync } from 'node:crypto'
import { type Server, createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildServer } from '../src/broker/http/build.js'
import type { Broker } from '../src/broker/index.js'
import { memoryBroker } from './helpers/deps.js'

// The attacks of issue 15 on what the broker tells and whom it lets drive it: secrets in
// /hash-check and error texts, an OAuth 1.0a request token handed to two flows, cross-site
// requests from a browser, and fields that end up in HTTP headers.

let broker: Broker
let app: FastifyInstance
let provider: Server
let providerUrl = ''
/** What the OAuth 1.0a provider's request token endpoint answers, whatever the consumer. */
const requestTokenAnswer = 'oauth_token=SAME-REQUEST-TOKEN&oauth_token_secret=rts&oauth_callback_confirmed=true'

beforeAll(async () => {
  provider = createServer((req, res) => {
    req.resume()
    if (req.url?.startsWith('/request')) return res.end(requestTokenAnswer)
    if (req.url?.startsWith('/access')) return res.end('oauth_token=AT&oauth_token_secret=ATS')
    if (req.url?.startsWith('/device')) {
      res.setHeader('content-type', 'application/json')
      const verification_uri = `${providerUrl}/verify`
      return res.end(
        JSON.stringify({ device_code: 'DC-SECRET', user_code: 'WDJB-MJHT', verification_uri, expires_in: 60 }),
      )
    }
    res.writeHead(500, { 'content-type': 'text/html' })
    res.end('<html>\u0007\u001b[31mboom\r\nSet-Cookie: x=1 client_secret=LEAKED-IN-BODY ' + 'x'.repeat(2000))
  })
  await new Promise<void>((r) => provider.listen(0, '127.0.0.1', r))
  providerUrl = `http://127.0.0.1:${(provider.address() as AddressInfo).port}`
  broker = await memoryBroker({ host: 'broker.example' })
  app = await buildServer(broker)
})
afterAll(async () => {
  await app?.close()
  await broker?.close()
  provider.closeAllConnections()
  await new Promise((r) => provider.close(r))
})

const store = (payload: Record<string, unknown>, headers: Record<string, string> = {}) =>
  app.inject({ method: 'POST', url: '/store', payload, headers })

const threeLegged = (extra: Record<string, unknown> = {}) => ({
  auth_version: '2',
  auth_leg: '3',
  client_id: 'c',
  client_secret: 'TOP-SECRET-1',
  authorize_url: `${providerUrl}/authorize`,
  access_url: `${providerUrl}/token`,
  callback: 'http://localhost:8080/cb',
  ...extra,
})

describe('redaction', () => {
  // authorize_params holds text values only (issue 24: anything else is refused at /store), so the secrets sit
  // one level down here; redactDeep's own tests (src/redact.test.ts) go deeper, into arrays too.
  it('shows no secret in /hash-check under names like api_key, in the record and its parameters', async () => {
    const res = await store(
      threeLegged({
        authorize_params: {
          prompt: 'consent',
          api_key: 'TOP-SECRET-2',
          // client_assertion is refused there now (client authentication comes from the record).
          session_token: 'TOP-SECRET-3',
          password: 'TOP-SECRET-4',
          refresh_token: 'TOP-SECRET-5',
        },
        x_api_key: 'TOP-SECRET-6',
        code_verifier: 'TOP-SECRET-7',
      }),
    )
    expect(res.statusCode, res.body).toBe(200)
    const check = await app.inject({ url: `/hash-check?hash=${(res.json() as { hash: string }).hash}` })
    expect(check.statusCode).toBe(200)
    expect(check.body).not.toMatch(/TOP-SECRET/)
    expect(check.json().record.authorize_params.prompt).toBe('consent')
    expect(check.json().record.client_id).toBe('c')
  })

  it("shows issue 25's record fields in /hash-check, dpop_key and id_token redacted in every form", async () => {
    const key = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey
    const jwk = key.export({ format: 'jwk' })
    const pem = key.export({ format: 'pem', type: 'pkcs8' }).toString()
    const check = async (record: Record<string, unknown>) => {
      const res = await store(record)
      expect(res.statusCode, res.body).toBe(200)
      const answer = await app.inject({ url: `/hash-check?hash=${(res.json() as { hash: string }).hash}` })
      for (const secret of [String(jwk.d), 'PRIVATE KEY', 'DC-SECRET', 'RT-SECRET', 'ID-TOKEN-SIG'])
        expect(answer.body).not.toContain(secret)
      return answer.json() as { progress: string; record: Record<string, unknown> }
    }
    const shown = {
      resource: 'https://mcp.example.com/mcp',
      client_name: 'my app',
      profile: true,
      profile_url: `${providerUrl}/me`,
    }
    for (const dpop_key of [jwk, JSON.stringify(jwk), pem]) {
      const { record } = await check(threeLegged({ ...shown, dpop_key }))
      expect(record).toMatchObject({ ...shown, dpop_key: '[redacted]', client_secret: '[redacted]' })
    }
    const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url')
    const refresh = await check({
      auth_version: '2',
      auth_leg: '2',
      grant_type: 'refresh_token',
      refresh_token: 'RT-SECRET',
      id_token: `${b64({ alg: 'RS256' })}.${b64({ iss: providerUrl, sub: 'alice', aud: 'c' })}.ID-TOKEN-SIG`,
      client_id: 'c',
      access_url: `${providerUrl}/token`,
      dpop: true,
    })
    expect(refresh.record).toMatchObject({ id_token: '[redacted]', refresh_token: '[redacted]', dpop: true })
    const device = await check({
      auth_flow: 'device',
      auth_version: '2',
      client_id: 'c',
      device_authorization_url: `${providerUrl}/device`,
      access_url: `${providerUrl}/token`,
      dpop_key: pem,
    })
    expect(device.progress).toBe('awaiting_user')
    expect(device.record).toMatchObject({ device_authorization_url: `${providerUrl}/device`, dpop_key: '[redacted]' })
  })

  it('refuses provider URLs that carry credentials, naming the field', async () => {
    for (const [field, url] of [
      ['access_url', `http://user:PASS@127.0.0.1:1/token`],
      ['authorize_url', `${providerUrl}/authorize?client_secret=PASS`],
      ['access_url', `${providerUrl}/token?api_key=PASS`],
    ] as const) {
      const res = await store(threeLegged({ [field]: url }))
      expect(res.statusCode, url).toBe(400)
      expect(res.json().fields[field], url).toMatch(/credentials/)
      expect(res.body).not.toContain('PASS')
    }
    const cb = await store(threeLegged({ callback: 'http://app:PASS@localhost:8080/cb' }))
    expect(cb.statusCode).toBe(400)
    expect(Object.keys(cb.json().fields)).toEqual(['callback'])
  })

  it("gives the app and /hash-check a short, one-line snippet of a provider's error page, without secrets", async () => {
    const res = await store({ auth_version: '2', auth_leg: '2', client_id: 'c', access_url: `${providerUrl}/boom` })
    const { hash } = res.json() as { hash: string }
    const started = await app.inject({ url: `/start?hash=${hash}` })
    expect(started.statusCode).toBe(502)
    const check = await app.inject({ url: `/hash-check?hash=${hash}` })
    const description = (check.json() as { error: { description: string } }).error.description
    for (const text of [description, started.json().message as string]) {
      // eslint-disable-next-line no-control-regex
      expect(text).not.toMatch(/[\u0000-\u001f\u007f]/)
      expect(text).not.toContain('LEAKED-IN-BODY')
      expect(text.length).toBeLessThanOrEqual(300)
    }
  })
})

describe('OAuth 1.0a request token correlation', () => {
  const oauth1 = () => ({
    auth_version: '1',
    auth_leg: '3',
    consumer_key: 'k',
    consumer_secret: 's',
    request_url: `${providerUrl}/request`,
    authorize_url: `${providerUrl}/authorize`,
    access_url: `${providerUrl}/access`,
    callback: 'http://localhost:8080/cb',
  })

  it('fails the second flow handed the same request token; the first keeps its callback', async () => {
    const [a, b] = await Promise.all([store(oauth1()), store(oauth1())])
    const hashA = (a.json() as { hash: string }).hash
    const hashB = (b.json() as { hash: string }).hash
    const startA = await app.inject({ url: `/start?hash=${hashA}` })
    expect(startA.statusCode).toBe(302)
    const cookieA = String(startA.headers['set-cookie']).split(';')[0]!
    const startB = await app.inject({ url: `/start?hash=${hashB}` })
    // B's app hears of a provider error; B never waits for A's callback.
    expect(startB.statusCode).toBe(302)
    expect(startB.headers.location).toMatch(/^http:\/\/localhost:8080\/cb\?.*error=server_error/)
    const checkB = (await app.inject({ url: `/hash-check?hash=${hashB}` })).json()
    expect(checkB).toMatchObject({ progress: 'failed', error: { code: 'PROVIDER_ERROR' } })
    // The victim's callback still reaches the victim's flow and finishes it.
    const callback = await app.inject({
      url: '/callback?oauth_token=SAME-REQUEST-TOKEN&oauth_verifier=v',
      headers: { cookie: cookieA },
    })
    expect(callback.statusCode, callback.body).toBe(302)
    expect(callback.headers.location).toContain('access_token=AT')
    expect((await app.inject({ url: `/hash-check?hash=${hashA}` })).json().progress).toBe('completed')
  })
})

describe('cross-site requests (fetch metadata)', () => {
  it('refuses /store and /result driven by a web page of another site, 403 CROSS_SITE', async () => {
    const attempts: Record<string, string>[] = [
      { origin: 'http://evil.example' },
      { origin: 'null' },
      { 'sec-fetch-site': 'cross-site' },
      { 'sec-fetch-site': 'same-site', origin: 'http://broker.example' },
    ]
    for (const headers of attempts) {
      const res = await store(threeLegged(), headers)
      expect(res.statusCode, JSON.stringify(headers)).toBe(403)
      expect(res.json()).toMatchObject({ code: 'CROSS_SITE' })
      expect(res.headers['x-content-type-options']).toBe('nosniff')
      const result = await app.inject({ method: 'POST', url: '/result', payload: { result: 'x' }, headers })
      expect(result.statusCode).toBe(403)
    }
  })

  it('lets servers (no such headers) and same-origin pages through', async () => {
    expect((await store(threeLegged())).statusCode).toBe(200)
    expect(
      (await store(threeLegged(), { origin: 'http://broker.example', 'sec-fetch-site': 'same-origin' })).statusCode,
    ).toBe(200)
  })
})

describe('header-bound fields', () => {
  const echo = (extra: Record<string, unknown>) => ({
    auth_type: 'oauth',
    auth_flow: 'echo',
    auth_version: '1',
    consumer_key: 'k',
    consumer_secret: 's',
    oauth_token: 't',
    oauth_token_secret: 'ts',
    verify_url: `${providerUrl}/verify`,
    ...extra,
  })

  it('refuses CR/LF, quotes and non-ASCII where a field is sent in a header, 400 naming the field', async () => {
    for (const [field, value] of [
      ['verify_url', `${providerUrl}/verify\r\nx-injected: 1`],
      ['verify_url', `${providerUrl}/vérify`],
      ['realm', 'a", oauth_signature="forged'],
      ['realm', 'line\r\nbreak'],
      ['realm', 'réalm'],
    ] as const) {
      const res = await store(echo({ [field]: value }))
      expect(res.statusCode, JSON.stringify(value)).toBe(400)
      expect(res.json().fields, JSON.stringify(value)).toHaveProperty(field)
      expect(res.headers['x-content-type-options']).toBe('nosniff')
    }
  })

  it('signs with a clean realm', async () => {
    const res = await store(echo({ realm: 'https://api.example.com/' }))
    expect(res.statusCode, res.body).toBe(200)
    const signed = await app.inject({ method: 'POST', url: '/sign', payload: { hash: res.json().hash } })
    expect(signed.statusCode, signed.body).toBe(200)
    expect(signed.json().x_verify_credentials_authorization).toMatch(/^OAuth realm="https:\/\/api\.example\.com\/", /)
  })
})
