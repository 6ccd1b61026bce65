import { createServer, type Server, type ServerResponse } from 'node:http'
import { type JWK } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type BrokerProcess, startBroker } from './helpers/broker.js'
import { CLIENT_SECRET, decideDevice, type DpopProvider, startDpopProvider } from './helpers/dpop-provider.js'
import { type DpopResource, startDpopResource } from './helpers/dpop-resource.js'
import { callResource } from './helpers/dpop-proof.js'
import { freePort } from './helpers/ports.js'

// End to end: the device authorization grant (RFC 8628) through `broker serve`, against oidc-provider
// (its answers given an `interval` of 0.3 s and, when a test asks, `slow_down`: see the helper) and
// a hand-made provider for what oidc-provider cannot be made to say quickly.
let broker: BrokerProcess
let op: DpopProvider
let resource: DpopResource

beforeAll(async () => {
  const [brokerPort, opPort] = await Promise.all([freePort(), freePort()])
  op = await startDpopProvider(opPort, `http://localhost:${brokerPort}/callback`)
  op.device.interval = 0.3
  resource = await startDpopResource(`${op.issuer}/token/introspection`, `resource:${CLIENT_SECRET}`)
  broker = await startBroker({ port: brokerPort, args: ['--store', 'memory'] })
}, 30_000)

afterAll(async () => {
  await broker?.stop()
  await Promise.all([op?.stop(), resource?.close()])
})

const post = async (path: string, body: Record<string, unknown>) => {
  const res = await fetch(`${broker.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> }
}
const storeDevice = (record: Record<string, unknown>) =>
  post('/store', { auth_flow: 'device', auth_version: '2', issuer: op.issuer, ...record })
const poll = (hash: unknown) => post('/result', { hash })
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const tokenPosts = () => op.requests.filter((r) => r.line === 'POST /token').length

/** Polls every 350 ms until the answer is no longer 202. */
async function pollUntilDecided(hash: unknown): Promise<Awaited<ReturnType<typeof poll>>> {
  for (let i = 0; i < 40; i++) {
    const res = await poll(hash)
    if (res.status !== 202) return res
    await sleep(350)
  }
  throw new Error('the user never decided')
}

describe('the device flow against oidc-provider', () => {
  it('answers the codes at /store, waits for the user, delivers DPoP-bound tokens once', async () => {
    const stored = await storeDevice({ client_id: 'dpop-public', client_auth: 'none', scope: 'openid', dpop: true })
    expect(stored.status, JSON.stringify(stored.body)).toBe(200)
    const { hash, url, user_code, verification_uri, verification_uri_complete, interval, expires_in } = stored.body
    expect(stored.body.plugin).toBe('oauth_device_2')
    expect(user_code).toMatch(/^\w{4}-?\w{4}$/)
    expect(verification_uri).toBe(`${op.issuer}/device`)
    expect(String(verification_uri_complete)).toContain(`${op.issuer}/device?user_code=`)
    expect(interval).toBe(0.3)
    expect(expires_in).toBe(600)
    expect(JSON.stringify(stored.body)).not.toContain('device_code')

    const check = (await (await fetch(`${broker.url}/hash-check?hash=${String(hash)}`)).json()) as Record<
      string,
      unknown
    >
    expect(check.progress).toBe('awaiting_user')
    expect(check.expires_in).toBeGreaterThan(590)

    // Before the user decides: 202, and two polls at once reach the provider once at most.
    const before = tokenPosts()
    const [a, b] = await Promise.all([poll(hash), poll(hash)])
    expect([a.status, b.status]).toEqual([202, 202])
    expect(a.body.progress).toBe('awaiting_user')
    expect(Number(b.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    // One poll (a DPoP nonce retry makes it two requests at most).
    expect(tokenPosts() - before).toBeLessThanOrEqual(2)

    const start = await fetch(String(url), { redirect: 'manual' })
    expect(start.status).toBe(302)
    expect(start.headers.get('location')).toBe(verification_uri_complete)
    const done = await decideDevice(String(url))
    expect(done.status).toBe(200)

    const result = await pollUntilDecided(hash)
    expect(result.status, JSON.stringify(result.body)).toBe(200)
    expect(result.body.token_type).toBe('DPoP')
    expect(result.body.id_token_verified).toBe(true)
    const jwk = result.body.dpop_jwk as JWK
    expect(await callResource(resource.url, String(result.body.access_token), jwk)).toEqual({
      status: 200,
      sub: 'alice',
    })

    const again = await poll(hash)
    expect(again.status).toBe(409)
    expect(again.body.code).toBe('FLOW_FINISHED')
  })

  it('tells the app the user refused: 400 FAILED with access_denied', async () => {
    const stored = await storeDevice({ client_id: 'device-public', client_auth: 'none' })
    expect(stored.status, JSON.stringify(stored.body)).toBe(200)
    await decideDevice(String(stored.body.url), true)
    const result = await pollUntilDecided(stored.body.hash)
    expect(result.status).toBe(400)
    expect(result.body).toMatchObject({ code: 'FAILED', error: 'access_denied' })
    expect(typeof result.body.message).toBe('string')
    const check = (await (await fetch(`${broker.url}/hash-check?hash=${String(stored.body.hash)}`)).json()) as {
      progress: string
    }
    expect(check.progress).toBe('failed')
  })

  it("delivers the user's profile with profile: true (userinfo, after the token)", async () => {
    const stored = await storeDevice({
      client_id: 'device-public',
      client_auth: 'none',
      scope: 'openid',
      profile: true,
    })
    expect(stored.status, JSON.stringify(stored.body)).toBe(200)
    await decideDevice(String(stored.body.url))
    const result = await pollUntilDecided(stored.body.hash)
    expect(result.status, JSON.stringify(result.body)).toBe(200)
    expect(result.body.id_token_verified).toBe(true)
    expect(result.body.profile).toEqual({ sub: 'alice' })
    expect(op.requests.filter((r) => r.line === 'GET /me').at(-1)?.scheme).toBe('Bearer')
  })

  it('polls 5 s slower after slow_down, and not before', async () => {
    const stored = await storeDevice({ client_id: 'device-public', client_auth: 'none' })
    op.device.slowDowns = 1
    const before = tokenPosts()
    const first = await poll(stored.body.hash)
    expect(first.body).toEqual({ progress: 'awaiting_user', retry_after: 6 })
    const second = await poll(stored.body.hash)
    expect(second.status).toBe(202)
    expect(second.body.retry_after).toBeGreaterThanOrEqual(5)
    expect(tokenPosts() - before).toBe(1)
  })

  it('refuses at /store a callback, and a record without a device endpoint', async () => {
    const callback = await storeDevice({ client_id: 'device-public', callback: 'http://localhost:1/cb' })
    expect(callback.status).toBe(400)
    expect(Object.keys(callback.body.fields as object)).toEqual(['callback'])
    const bare = await post('/store', { auth_flow: 'device', auth_version: '2', client_id: 'x' })
    expect(bare.status).toBe(400)
    expect(Object.keys(bare.body.fields as object).sort()).toEqual(['access_url', 'device_authorization_url'])
  })
})

describe('the device flow against a hand-made provider', () => {
  let server: Server
  let base: string
  // What the provider says: its interval (none when undefined), and the token answers in turn.
  let interval: number | undefined
  let answers: string[] = []
  let polls = 0
  /** Every request's path and form parameters, in order. */
  const sent: { url: string; params: URLSearchParams }[] = []
  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = ''
      req.on('data', (chunk: Buffer) => (body += chunk.toString()))
      req.on('end', () => answer(req.url, body, res))
    })
    const answer = (url: string | undefined, body: string, res: ServerResponse) => {
      sent.push({ url: url ?? '', params: new URLSearchParams(body) })
      res.setHeader('content-type', 'application/json')
      if (url === '/device') {
        const verification_uri = `${base}/verify`
        res.end(
          JSON.stringify({
            device_code: 'dc-secret-1',
            user_code: 'ABCD-EFGH',
            verification_uri,
            expires_in: 30,
            interval,
          }),
        )
        return
      }
      polls++
      const answer = answers.shift() ?? 'authorization_pending'
      if (answer === 'tokens') return res.end(JSON.stringify({ access_token: `at-${polls}`, token_type: 'Bearer' }))
      res.statusCode = 400
      res.end(JSON.stringify({ error: answer }))
    }
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
    const address = server.address()
    base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`
  })
  afterAll(() => new Promise<void>((r) => server.close(() => r())))

  const storeHere = (extra: Record<string, unknown> = {}) =>
    post('/store', {
      auth_flow: 'device',
      auth_version: '2',
      client_id: 'c',
      client_auth: 'none',
      device_authorization_url: `${base}/device`,
      access_url: `${base}/token`,
      ...extra,
    })

  it('takes 5 s as the interval when none is given: five polls at once reach the provider once', async () => {
    interval = undefined
    polls = 0
    const stored = await storeHere()
    expect(stored.status, JSON.stringify(stored.body)).toBe(200)
    expect(stored.body).toMatchObject({ interval: 5, expires_in: 30, user_code: 'ABCD-EFGH' })
    expect(stored.body.verification_uri_complete).toBeUndefined()
    const hash = stored.body.hash
    const replies = await Promise.all([1, 2, 3, 4, 5].map(() => poll(hash)))
    expect(replies.map((a) => a.status)).toEqual([202, 202, 202, 202, 202])
    expect(polls).toBe(1)
    // The poll that ran says 5 s; those that came while it ran are told to ask again in 1 s, or what is left of the 5.
    expect(replies.map((r) => r.body.retry_after)).toContain(5)
    for (const r of replies) expect(r.body.retry_after).toBeLessThanOrEqual(5)
    const check = await (await fetch(`${broker.url}/hash-check?hash=${String(hash)}`)).text()
    expect(check).not.toContain('dc-secret-1')
    // /start sends a browser to verification_uri when there is no complete one.
    const start = await fetch(String(stored.body.url), { redirect: 'manual' })
    expect(start.headers.get('location')).toBe(`${base}/verify`)
  })

  it('redeems once when five polls arrive together after the user approved: one 200, then 409', async () => {
    interval = 0.2
    answers = ['tokens', 'tokens']
    polls = 0
    const stored = await storeHere()
    const replies = await Promise.all([1, 2, 3, 4, 5].map(() => poll(stored.body.hash)))
    expect(polls).toBe(1)
    const delivered = replies.filter((r) => r.status === 200)
    expect(delivered).toHaveLength(1)
    expect(delivered[0]!.body).toMatchObject({ access_token: 'at-1', token_type: 'Bearer' })
    // The others came while it ran (202: ask again) or after it delivered (409).
    for (const r of replies.filter((x) => x.status !== 200)) expect([202, 409]).toContain(r.status)
    const after = await poll(stored.body.hash)
    expect(after.status).toBe(409)
    expect(after.body.code).toBe('FLOW_FINISHED')
    expect(polls).toBe(1)
  })

  it('names the resource in the device and token requests (RFC 8707), and delivers it back', async () => {
    interval = 0.2
    answers = ['tokens']
    const resource = 'https://mcp.example.com/mcp'
    const stored = await storeHere({ resource })
    expect(stored.status, JSON.stringify(stored.body)).toBe(200)
    const result = await pollUntilDecided(stored.body.hash)
    expect(result.status, JSON.stringify(result.body)).toBe(200)
    expect(result.body.resource).toBe(resource)
    expect(sent.slice(-2).map((r) => [r.url, r.params.get('resource')])).toEqual([
      ['/device', resource],
      ['/token', resource],
    ])
  })

  it('reports expired_token as 400 FAILED, once the provider says so', async () => {
    interval = 0.2
    answers = ['authorization_pending', 'expired_token']
    const stored = await storeHere()
    const result = await pollUntilDecided(stored.body.hash)
    expect(result.status).toBe(400)
    expect(result.body).toMatchObject({ code: 'FAILED', error: 'expired_token' })
    expect(JSON.stringify(result.body)).not.toContain('dc-secret-1')
  })
})
