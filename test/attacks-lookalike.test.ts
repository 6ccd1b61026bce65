import { SignJWT } from 'jose'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { type CallbackApp, startCallbackApp } from './helpers/app.js'
import { type BrokerProcess, startBroker } from './helpers/broker.js'
import { Browser } from './helpers/browser.js'
import { storeAt } from './helpers/flow-suite.js'
import { type HandMadeProvider, startHandMadeProvider } from './helpers/hand-made-oidc.js'

// Issue 27 (high): names that are not the broker's, but that an app's framework reads as the broker's.
// PHP reads `id.token` as `id_token`, Express's qs reads `state[]` as `state`: a forged token appended to
// the callback URL by the user, or sent by a hostile token endpoint, must never reach the app.
let broker: BrokerProcess
let app: CallbackApp
let hm: HandMadeProvider
let appended: Record<string, string> = {}

const FORGED = await new SignJWT({ sub: 'victim', iss: 'x', aud: 'hm-client' })
  .setProtectedHeader({ alg: 'none' } as never)
  .sign(new Uint8Array(32))
  .catch(() => 'eyJhbGciOiJub25lIn0.eyJzdWIiOiJ2aWN0aW0ifQ.')

const LOOK_ALIKES = [
  'id.token',
  ' id_token',
  'id token',
  'id[token',
  'ID_TOKEN',
  'id_token[]',
  'id_token[x]',
  'access.token',
  'access_token[]',
  'state[]',
  ' error',
  'broker.error',
  'id token verified',
  'id.token.verified',
  'result[]',
]

beforeAll(async () => {
  ;[app, hm] = await Promise.all([startCallbackApp(), startHandMadeProvider()])
  const honest = hm.authorize
  hm.authorize = (q, issuer) => {
    const back = new URL(honest(q, issuer))
    for (const [k, v] of Object.entries(appended)) back.searchParams.set(k, v)
    return back.toString()
  }
  broker = await startBroker({ args: ['--store', 'memory'] })
}, 30_000)

afterAll(async () => {
  await broker?.stop()
  await Promise.all([app?.close(), hm?.stop()])
})

beforeEach(() => {
  hm.plan = {}
  appended = {}
})

async function run(delivery: 'query' | 'form_post'): Promise<Record<string, string>> {
  const { url } = await storeAt(broker.url, {
    auth_version: '2',
    auth_leg: '3',
    issuer: hm.issuer,
    client_id: 'hm-client',
    client_secret: 'hm-secret',
    scope: 'openid',
    state: 'app-state',
    delivery,
    callback: app.callback,
  })
  const res = await new Browser().go(url)
  if (delivery === 'form_post') {
    // The page posts itself; read its fields as the browser would submit them.
    const fields: Record<string, string> = {}
    for (const m of res.body.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g)) fields[m[1]!] = m[2]!
    return fields
  }
  expect(res.body).toBe('app got it')
  return app.received.at(-1)!.query
}

const names = (got: Record<string, string>) =>
  Object.keys(got).map((k) => k.replace(/&#(\d+);/g, (_, c: string) => String.fromCharCode(Number(c))))

describe.each(['query', 'form_post'] as const)('look-alike field names, %s delivery', (delivery) => {
  it('drops every look-alike the user appends to the callback URL; the real token is still verified', async () => {
    appended = Object.fromEntries(LOOK_ALIKES.map((n) => [n, FORGED]))
    appended.realmId = '42'
    const got = await run(delivery)
    expect(names(got).filter((n) => LOOK_ALIKES.includes(n))).toEqual([])
    expect(Object.values(got)).not.toContain(FORGED)
    expect(got.id_token_verified).toBe('true')
    expect(got.state).toBe('app-state')
    expect(got.realmId).toBe('42')
  })

  it('drops every look-alike a hostile token endpoint sends', async () => {
    hm.plan = { answer: { ...Object.fromEntries(LOOK_ALIKES.map((n) => [n, FORGED])), instance_url: 'https://x' } }
    const got = await run(delivery)
    expect(names(got).filter((n) => LOOK_ALIKES.includes(n))).toEqual([])
    expect(Object.values(got)).not.toContain(FORGED)
    expect(got.id_token_verified).toBe('true')
    expect(got.instance_url).toBe('https://x')
  })
})
