import { createPublicKey } from 'node:crypto'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { type CallbackApp, startCallbackApp } from './helpers/app.js'
import { type BrokerProcess, startBroker } from './helpers/broker.js'
import { Browser } from './helpers/browser.js'
import { storeAt } from './helpers/flow-suite.js'
import {
  ecKey,
  type HandMadeProvider,
  hs256Jwt,
  rsaKey,
  startHandMadeProvider,
  unsignedJwt,
} from './helpers/hand-made-oidc.js'
import { CLIENT_SECRET } from './helpers/oidc-provider.js'

// The OpenID Foundation's RP cases (`oidcc-client-test-*`) this file adds for a code-flow RP, the
// user's profile (userinfo), and the identity a refresh must keep, through `broker serve` against
// hand-made providers that spoil one thing at a time.
let broker: BrokerProcess
let app: CallbackApp
let hm: HandMadeProvider

beforeAll(async () => {
  ;[app, hm] = await Promise.all([startCallbackApp(), startHandMadeProvider()])
  broker = await startBroker({ args: ['--store', 'memory'] })
}, 30_000)

afterAll(async () => {
  await broker?.stop()
  await Promise.all([app?.close(), hm?.stop()])
})

beforeEach(() => {
  hm.plan = {}
  hm.userinfo = {}
})

const base = (provider: HandMadeProvider) => ({
  auth_version: '2',
  auth_leg: '3',
  issuer: provider.issuer,
  client_id: 'hm-client',
  client_secret: 'hm-secret',
  scope: 'openid',
  callback: app.callback,
})

async function run(record: Record<string, unknown>): Promise<Record<string, string>> {
  const { url } = await storeAt(broker.url, record as Record<string, string>)
  const res = await new Browser().go(url)
  expect(res.body).toBe('app got it')
  return app.received.at(-1)!.query
}

/** A 2-legged record's /start answered as JSON: status and body. */
async function startJson(record: Record<string, unknown>): Promise<{ status: number; body: Record<string, unknown> }> {
  const { hash } = await storeAt(broker.url, record as Record<string, string>)
  const res = await fetch(`${broker.url}/start?hash=${hash}`)
  return { status: res.status, body: (await res.json()) as Record<string, unknown> }
}

describe('the user profile (profile: true)', () => {
  it('delivers the userinfo as JSON text in a query delivery, fetched with the access token', async () => {
    const got = await run({ ...base(hm), profile: 'true' })
    expect(got.error_description).toBeUndefined()
    expect(JSON.parse(got.profile!)).toEqual({ sub: 'alice', name: 'Alice' })
    expect(hm.userinfoRequests.at(-1)).toBe('Bearer hm-access')
  })

  it("fails with invalid_request and delivers nothing when the userinfo sub is not the id_token's", async () => {
    hm.userinfo = { claims: { sub: 'mallory' } }
    const got = await run({ ...base(hm), profile: 'true' })
    expect(got.error).toBe('invalid_request')
    expect(got.error_description).toMatch(/sub "mallory" is not the id_token's sub "alice"/)
    expect(got.access_token).toBeUndefined()
    expect(got.profile).toBeUndefined()
  })

  it('verifies a signed userinfo (application/jwt): its claims are the profile; a bad signature or iss fails', async () => {
    hm.userinfo = { signed: true, claims: { iss: hm.issuer, aud: 'hm-client' } }
    const good = await run({ ...base(hm), profile: 'true' })
    expect(JSON.parse(good.profile!)).toMatchObject({ sub: 'alice', name: 'Alice', iss: hm.issuer })
    hm.userinfo = { signed: true, key: rsaKey() }
    const forged = await run({ ...base(hm), profile: 'true' })
    expect(forged.error).toBe('invalid_request')
    expect(forged.error_description).toMatch(/signature does not verify/)
    hm.userinfo = { signed: true, claims: { iss: 'https://evil.example' } }
    const foreign = await run({ ...base(hm), profile: 'true' })
    expect(foreign.error_description).toMatch(/iss/)
    expect(foreign.access_token).toBeUndefined()
  })

  it('is delivered as an object in a JSON answer (2-legged)', async () => {
    const { status, body } = await startJson({
      auth_version: '2',
      auth_leg: '2',
      issuer: hm.issuer,
      client_id: 'hm-client',
      client_secret: 'hm-secret',
      profile: true,
    })
    expect(status, JSON.stringify(body)).toBe(200)
    expect(body.profile).toEqual({ sub: 'alice', name: 'Alice' })
  })

  it('refuses profile: true at /store when there is no userinfo endpoint to call', async () => {
    const res = await fetch(`${broker.url}/store`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        ...base(hm),
        issuer: undefined,
        authorize_url: `${hm.issuer}/authorize`,
        access_url: `${hm.issuer}/token`,
        profile: true,
      }),
    })
    expect(res.status).toBe(400)
    expect(((await res.json()) as { fields: Record<string, string> }).fields.profile).toMatch(/profile_url/)
  })
})

describe('refresh keeps the identity (OpenID Connect Core §12.2)', () => {
  async function original(): Promise<string> {
    return (await run(base(hm))).id_token!
  }
  const refresh = (idToken: string, withIssuer: boolean) => ({
    auth_version: '2',
    auth_leg: '2',
    grant_type: 'refresh_token',
    refresh_token: 'hm-refresh',
    id_token: idToken,
    client_id: 'hm-client',
    client_secret: 'hm-secret',
    ...(withIssuer ? { issuer: hm.issuer } : { access_url: `${hm.issuer}/token`, jwks_uri: `${hm.issuer}/jwks` }),
  })

  it.each([true, false])(
    'delivers a refreshed id_token of the same user (issuer in the record: %s)',
    async (withIssuer) => {
      const { status, body } = await startJson(refresh(await original(), withIssuer))
      expect(status, JSON.stringify(body)).toBe(200)
      expect(body.id_token_verified).toBe(true)
    },
  )

  it.each([
    ['another sub', { sub: 'mallory' }, /sub/, true],
    ['another sub, no issuer in the record', { sub: 'mallory' }, /sub/, false],
    ['another iss, no issuer in the record', { iss: 'https://evil.example' }, /iss "https:\/\/evil.example"/, false],
  ])('ends the refresh on %s: an error and no token', async (_, claims, why, withIssuer) => {
    const first = await original()
    hm.plan = { claims }
    const { status, body } = await startJson(refresh(first, withIssuer))
    expect(status).toBe(502)
    expect(String(body.message)).toMatch(why)
    expect(body.access_token).toBeUndefined()
  })
})

describe('oidcc-client-test cases for a code-flow RP', () => {
  // An EC key published beside the RSA one (kid e1), for the ES256 cases.
  const es256 = ecKey()
  beforeAll(async () => {
    hm.published.set('e1', es256)
    // The broker refetches a key set for an unknown kid at most once a second: a test that ran just
    // before may have read this issuer's keys without e1 (a rotation is seen after that interval).
    await new Promise((resolve) => setTimeout(resolve, 1_100))
  })
  afterAll(() => void hm.published.delete('e1'))

  it.each([
    ['oidcc-client-test / oidcc-client-test-idtoken-sig-rs256: RS256', {}],
    ['ES256', { key: es256, kid: 'e1' }],
  ])('accepts a good id_token signed %s: delivered as verified', async (_, plan) => {
    hm.plan = plan
    const got = await run(base(hm))
    expect(got.error_description).toBeUndefined()
    expect(got.id_token_verified).toBe('true')
    expect(got.access_token).toBe('hm-access')
  })

  // What each case spoils, and what the app is told: invalid_id_token, and no token at all.
  const publicPem = () => createPublicKey(hm.published.get('k1')!).export({ format: 'pem', type: 'spki' }).toString()
  it.each([
    ['oidcc-client-test-invalid-sig-rs256', () => ({ key: rsaKey() }), /signature does not verify/],
    ['oidcc-client-test-invalid-sig-es256', () => ({ key: ecKey(), kid: 'e1' }), /signature does not verify/],
    ['oidcc-client-test-idtoken-sig-none', () => ({ token: unsignedJwt }), /algorithm not allowed/],
    [
      'oidcc-client-test-invalid-sig-hs256 (signed with the client secret)',
      () => ({ token: (c: Record<string, unknown>) => hs256Jwt(c, CLIENT_SECRET) }),
      /algorithm not allowed/,
    ],
    [
      'HS256 keyed with the provider public key (algorithm confusion)',
      () => ({ token: (c: Record<string, unknown>) => hs256Jwt(c, publicPem(), 'k1') }),
      /algorithm not allowed/,
    ],
    ['oidcc-client-test-missing-aud', () => ({ claims: { aud: undefined } }), /"aud"/],
    ['oidcc-client-test-missing-sub', () => ({ claims: { sub: undefined } }), /"sub"/],
    ['oidcc-client-test-missing-iat', () => ({ claims: { iat: undefined } }), /"iat"/],
  ])('%s: the flow ends with invalid_id_token and no token', async (_, plan, why) => {
    hm.plan = plan()
    const got = await run({ ...base(hm), client_secret: CLIENT_SECRET })
    expect(got.error).toBe('invalid_id_token')
    expect(got.error_description).toMatch(why)
    expect(got.access_token).toBeUndefined()
    expect(got.id_token).toBeUndefined()
  })

  it('oidcc-client-test-kid-absent-multiple-jwks: no kid and two RSA keys: verified against each candidate', async () => {
    hm.published.set('k2', rsaKey())
    try {
      hm.plan = { noKid: true }
      expect((await run(base(hm))).id_token_verified).toBe('true')
      hm.plan = { noKid: true, key: rsaKey() }
      expect((await run(base(hm))).error_description).toMatch(/signature does not verify/)
    } finally {
      hm.published.delete('k2')
    }
  })

  it('oidcc-client-test-kid-absent-single-jwks: no kid and one key', async () => {
    hm.plan = { noKid: true }
    expect((await run(base(hm))).id_token_verified).toBe('true')
  })

  it('oidcc-client-test-discovery-issuer-mismatch: refused at /store, nothing stored', async () => {
    const liar = await startHandMadeProvider({ issuer: 'https://someone-else.example' })
    try {
      const res = await fetch(`${broker.url}/store`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(base(liar)),
      })
      expect(res.status).toBe(502)
      expect(((await res.json()) as { message: string }).message).toContain(
        'names the issuer "https://someone-else.example"',
      )
    } finally {
      await liar.stop()
    }
  })

  it.each([
    ['none', { client_secret: undefined }],
    ['client_secret_post', { client_secret: CLIENT_SECRET }],
    ['client_secret_jwt', { client_secret: CLIENT_SECRET }],
    ['private_key_jwt', { client_secret: undefined, private_key: ecKey().export({ format: 'jwk' }) }],
  ])(
    'client_auth %s is not refused at /store when the metadata lists only client_secret_basic: the token endpoint decides',
    async (method, fields) => {
      const basicOnly = await startHandMadeProvider({ token_endpoint_auth_methods_supported: ['client_secret_basic'] })
      try {
        const got = await run({ ...base(basicOnly), ...fields, client_auth: method })
        expect(got.access_token).toBe('hm-access')
        const sent = basicOnly.tokenRequests.at(-1)!
        expect(sent.authorization).toBeUndefined()
        expect(sent.body.client_id).toBe('hm-client')
        if (method.endsWith('_jwt')) expect(sent.body.client_assertion).toBeTruthy()
      } finally {
        await basicOnly.stop()
      }
    },
  )

  it('mix-up without an issuer: a response iss of another origin than authorize_url fails before the code is redeemed', async () => {
    const honest = await startHandMadeProvider()
    const hostile = await startHandMadeProvider()
    try {
      // The record names no issuer: only the hostile endpoints; the honest provider answers with its iss.
      hostile.authorize = (q) => honest.authorize(q, honest.issuer)
      const record = {
        ...base(hostile),
        issuer: undefined,
        authorize_url: `${hostile.issuer}/authorize`,
        access_url: `${hostile.issuer}/token`,
      }
      const got = await run(record)
      expect(got.error).toBe('invalid_request')
      expect(got.error_description).toContain(`not from the origin of authorize_url ${hostile.issuer}`)
      expect(hostile.tokenRequests).toHaveLength(0)
      // The control: its own iss passes.
      hostile.authorize = (q) => honest.authorize(q, hostile.issuer)
      expect((await run(record)).access_token).toBe('hm-access')
    } finally {
      await Promise.all([honest.stop(), hostile.stop()])
    }
  })
})
