import { generateKeyPairSync, type KeyObject } from 'node:crypto'
import { calculateJwkThumbprint, type JWK } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type CallbackApp, startCallbackApp } from './helpers/app.js'
import { type BrokerProcess, startBroker } from './helpers/broker.js'
import { Browser } from './helpers/browser.js'
import { CLIENT_SECRET, type DpopProvider, startDpopProvider } from './helpers/dpop-provider.js'
import { callResource as callProtected } from './helpers/dpop-proof.js'
import { type DpopResource, startDpopResource } from './helpers/dpop-resource.js'
import { passInteractions } from './helpers/oidc-provider.js'
import { freePort } from './helpers/ports.js'

// End to end: `broker serve` against oidc-provider with DPoP nonces required, and a resource of the
// tests' own that takes the delivered token only with a proof of the bound key (see the helpers).
let broker: BrokerProcess
let op: DpopProvider
let app: CallbackApp
let resource: DpopResource

beforeAll(async () => {
  const [brokerPort, opPort] = await Promise.all([freePort(), freePort()])
  ;[op, app] = await Promise.all([
    startDpopProvider(opPort, `http://localhost:${brokerPort}/callback`),
    startCallbackApp(),
  ])
  resource = await startDpopResource(`${op.issuer}/token/introspection`, `resource:${CLIENT_SECRET}`)
  broker = await startBroker({ port: brokerPort, args: ['--store', 'memory'] })
}, 30_000)

afterAll(async () => {
  await broker?.stop()
  await Promise.all([op?.stop(), app?.close(), resource?.close()])
})

const p256 = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey
const p256Jwk = p256.export({ format: 'jwk' })
// Made before the tests: an RSA key takes seconds on a loaded machine.
const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey
const ed = generateKeyPairSync('ed25519').privateKey

const callResource = (token: string, key: KeyObject | JWK, alg?: string) => callProtected(resource.url, token, key, alg)

async function store(record: Record<string, unknown>): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${broker.url}/store`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ auth_version: '2', issuer: op.issuer, ...record }),
  })
  return { status: res.status, body: (await res.json()) as Record<string, unknown> }
}

/** Runs a 3-legged record through the provider's login and consent; returns what the app's callback got. */
async function runFlow(
  record: Record<string, unknown>,
): Promise<{ hash: string; got: Record<string, string>; authorize: URL }> {
  const stored = await store({ auth_leg: '3', scope: 'openid', callback: app.callback, ...record })
  expect(stored.status, JSON.stringify(stored.body)).toBe(200)
  const browser = new Browser()
  const first = await browser.go(String(stored.body.url))
  const res = await passInteractions(browser, first)
  expect(res.body).toBe('app got it')
  const authorize = new URL(first.hops[0]!.location!)
  return { hash: String(stored.body.hash), got: app.received.at(-1)!.query, authorize }
}

const tokenPosts = () => op.requests.filter((r) => r.line === 'POST /token')

describe('DPoP against oidc-provider with nonces required', () => {
  it('binds the code flow to the app key (given as JSON text): dpop_jkt, a proof on every token request, the nonce retry', async () => {
    const before = tokenPosts().length
    const { got, hash, authorize } = await runFlow({
      client_id: 'dpop-public',
      client_auth: 'none',
      dpop_key: JSON.stringify(p256Jwk),
    })
    expect(got.token_type).toBe('DPoP')
    expect(got.id_token_verified).toBe('true')
    expect(authorize.searchParams.get('dpop_jkt')).toBe(await calculateJwkThumbprint(p256Jwk as JWK))
    // The first token request had no nonce yet: refused with use_dpop_nonce, then retried once.
    const posts = tokenPosts().slice(before)
    expect(posts.length).toBe(2)
    expect(posts.every((p) => p.dpop)).toBe(true)
    // The token works at the resource only with a proof of the app's key.
    expect(await callResource(got.access_token!, p256)).toEqual({ status: 200, sub: 'alice' })
    const other = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey
    expect((await callResource(got.access_token!, other)).status).toBe(401)
    // The key is a secret, even as text.
    const check = (await (await fetch(`${broker.url}/hash-check?hash=${hash}`)).json()) as {
      record: Record<string, unknown>
    }
    expect(check.record.dpop_key).toBe('[redacted]')
    expect(JSON.stringify(check)).not.toContain(String(p256Jwk.d))

    // A refresh with the same key: the remembered nonce needs no retry.
    const refreshBefore = tokenPosts().length
    const refreshed = await store({
      auth_leg: '2',
      grant_type: 'refresh_token',
      refresh_token: got.refresh_token,
      client_id: 'dpop-public',
      client_auth: 'none',
      dpop_key: p256Jwk,
    })
    expect(refreshed.status, JSON.stringify(refreshed.body)).toBe(200)
    const answer = (await (await fetch(String(refreshed.body.url))).json()) as Record<string, string>
    expect(answer.token_type).toBe('DPoP')
    expect(tokenPosts().length - refreshBefore).toBe(1)
    expect((await callResource(answer.access_token!, p256)).status).toBe(200)
  })

  it('pushes the request with a proof and dpop_jkt (PAR), and makes a key for dpop: true delivered by code', async () => {
    const pushesBefore = op.requests.filter((r) => r.line === 'POST /request' && r.dpop).length
    const { got } = await runFlow({
      client_id: 'dpop-basic',
      client_secret: CLIENT_SECRET,
      client_auth: 'basic',
      par: true,
      dpop: true,
      delivery: 'code',
    })
    expect(op.requests.filter((r) => r.line === 'POST /request' && r.dpop).length).toBeGreaterThan(pushesBefore)
    expect(got.access_token).toBeUndefined()
    const result = await fetch(`${broker.url}/result`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ result: got.result }),
    })
    const delivered = (await result.json()) as { access_token: string; token_type: string; dpop_jwk: JWK }
    expect(delivered.token_type).toBe('DPoP')
    expect(delivered.dpop_jwk).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256' })
    expect(delivered.dpop_jwk.d).toBeTruthy()
    expect(await callResource(delivered.access_token, delivered.dpop_jwk)).toEqual({ status: 200, sub: 'alice' })
  })

  it('makes the key at /store for a flow whose first step runs there (no PAR), and keeps it for the exchange', async () => {
    const { got, authorize } = await runFlow({
      client_id: 'dpop-public',
      client_auth: 'none',
      dpop: true,
      delivery: 'code',
    })
    const delivered = (await (
      await fetch(`${broker.url}/result`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ result: got.result }),
      })
    ).json()) as { access_token: string; dpop_jwk: JWK }
    expect(authorize.searchParams.get('dpop_jkt')).toBe(await calculateJwkThumbprint(delivered.dpop_jwk))
    expect(await callResource(delivered.access_token, delivered.dpop_jwk)).toEqual({ status: 200, sub: 'alice' })
  })

  it('client credentials with an Ed25519 PEM key; an RSA key the server does not list is refused at /store', async () => {
    const base = { auth_leg: '2', client_id: 'dpop-basic', client_secret: CLIENT_SECRET, client_auth: 'basic' }
    const stored = await store({ ...base, dpop_key: ed.export({ format: 'pem', type: 'pkcs8' }).toString() })
    expect(stored.status, JSON.stringify(stored.body)).toBe(200)
    const answer = (await (await fetch(String(stored.body.url))).json()) as Record<string, string>
    expect(answer.token_type).toBe('DPoP')
    expect((await callResource(answer.access_token!, ed, 'EdDSA')).status).toBe(200)

    const refused = await store({ ...base, dpop_key: rsa.export({ format: 'pem', type: 'pkcs8' }).toString() })
    expect(refused.status).toBe(400)
    expect(Object.keys(refused.body.fields as object)).toEqual(['dpop_key'])
    expect(String((refused.body.fields as Record<string, string>).dpop_key)).toMatch(/ES256, Ed25519, EdDSA/)
    expect(JSON.stringify(refused.body)).not.toContain('PRIVATE KEY')
  })

  it('refuses dpop: true with query or form_post delivery, the default included, naming delivery', async () => {
    for (const delivery of [undefined, 'query', 'form_post']) {
      const res = await store({
        auth_leg: '3',
        client_id: 'dpop-public',
        client_auth: 'none',
        dpop: true,
        callback: app.callback,
        delivery,
      })
      expect(res.status).toBe(400)
      expect(Object.keys(res.body.fields as object)).toEqual(['delivery'])
    }
  })

  it('profile: true calls userinfo with the DPoP-bound token (RFC 9449 §7): DPoP scheme and a proof with ath', async () => {
    const { got } = await runFlow({ client_id: 'dpop-public', client_auth: 'none', dpop_key: p256Jwk, profile: true })
    expect(got.error_description).toBeUndefined()
    expect(got.token_type).toBe('DPoP')
    expect(JSON.parse(got.profile!)).toEqual({ sub: 'alice' })
    const userinfo = op.requests.filter((r) => r.line === 'GET /me').at(-1)!
    expect(userinfo).toMatchObject({ dpop: true, scheme: 'DPoP' })

    // A refresh (2-legged) with the same key and profile: true.
    const refreshed = await store({
      auth_leg: '2',
      grant_type: 'refresh_token',
      refresh_token: got.refresh_token,
      client_id: 'dpop-public',
      client_auth: 'none',
      dpop_key: p256Jwk,
      profile: true,
    })
    expect(refreshed.status, JSON.stringify(refreshed.body)).toBe(200)
    const answer = (await (await fetch(String(refreshed.body.url))).json()) as Record<string, unknown>
    expect(answer.token_type).toBe('DPoP')
    expect(answer.profile).toEqual({ sub: 'alice' })
  })

  it('a client bound to DPoP gets nothing without a key: the provider decides, the app is told', async () => {
    const stored = await store({
      auth_leg: '2',
      client_id: 'dpop-basic',
      client_secret: CLIENT_SECRET,
      client_auth: 'basic',
    })
    const res = await fetch(String(stored.body.url))
    const body = (await res.json()) as Record<string, unknown>
    expect(res.status).toBe(502)
    expect(body.access_token).toBeUndefined()
  })
})
