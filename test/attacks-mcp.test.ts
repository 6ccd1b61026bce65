import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type CallbackApp, startCallbackApp } from './helpers/app.js'
import { type BrokerProcess, startBroker } from './helpers/broker.js'
import { Browser } from './helpers/browser.js'
import { storeAt } from './helpers/flow-suite.js'
import {
  type HostileResource,
  startHostileResource,
  startTestAuthorizationServer,
  type TestAuthorizationServer,
} from './helpers/mcp-attackers.js'
import { freePort } from './helpers/ports.js'
import { type RedisServer, startRedis } from './helpers/redis.js'

// Issue 35: an attacker's round on discovery and registration. A hostile MCP server names an honest
// authorization server while the broker looks and its own afterwards; a hostile authorization server
// borrows the honest one's authorization endpoint or client_id. Two broker instances share one Redis
// (as behind a load balancer): each keeps its own discovery cache, so the one answering /callback
// discovers afresh, as any broker does once its cache entry lapses. Loopback only.

let redis: RedisServer
let app: CallbackApp
let a: BrokerProcess
let c: BrokerProcess
let honest: TestAuthorizationServer
let hostile: TestAuthorizationServer
const stops: Array<() => Promise<unknown>> = []

const SECRETS = { BROKER_SESSION_SECRET: 'mcp-attack-shared-session-secret-0123' }

beforeAll(async () => {
  ;[redis, app, honest, hostile] = await Promise.all([
    startRedis(),
    startCallbackApp(),
    startTestAuthorizationServer('honest'),
    startTestAuthorizationServer('hostile'),
  ])
  // Both instances build URLs with C's address: the authorization server sends the browser back to C.
  const portC = await freePort()
  const args = ['--store', 'redis', '--store-port', String(redis.port), '--host', `127.0.0.1:${portC}`]
  ;[a, c] = await Promise.all([startBroker({ args, env: SECRETS }), startBroker({ args, env: SECRETS, port: portC })])
}, 30_000)

afterAll(async () => {
  await Promise.all([a?.stop(), c?.stop(), ...stops.map((s) => s())])
  await Promise.all([redis?.stop(), app?.close(), honest?.stop(), hostile?.stop()])
})

async function hostileResource(names: string): Promise<HostileResource> {
  const r = await startHostileResource(names)
  stops.push(r.stop)
  return r
}

async function postStore(url: string, record: Record<string, string>) {
  const res = await fetch(`${url}/store`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(record),
  })
  return {
    status: res.status,
    body: (await res.json()) as { code: string; message: string; fields?: Record<string, string> },
  }
}

describe('a hostile MCP server that names another authorization server once it has been looked at', () => {
  let mcp: HostileResource
  let delivered: Record<string, string>

  it('/callback redeems the code where /start sent the user: the hostile server gets no code, verifier or secret', async () => {
    mcp = await hostileResource(honest.issuer)
    const { hash } = await storeAt(a.url, { resource: mcp.resource, callback: app.callback })
    // The user is at the honest server: the resource now names the hostile one.
    honest.onAuthorize = () => (mcp.names = hostile.issuer)
    const res = await new Browser().go(`${a.url}/start?hash=${hash}`)
    honest.onAuthorize = undefined
    expect(res.body).toBe('app got it')
    delivered = app.received.at(-1)!.query
    expect(delivered.error_description).toBeUndefined()
    expect(delivered.access_token).toBe('honest-at')
    // The app learns which server issued the tokens: a refresh goes there alone.
    expect(delivered.issuer).toBe(honest.issuer)
    expect(hostile.tokenCalls).toEqual([])
    expect(honest.tokenCalls.at(-1)!.params).toMatchObject({ grant_type: 'authorization_code', resource: mcp.resource })
    // The code came back to the honest server's own redirect URI at the broker (RFC 9700 §4.4.2).
    expect(res.hops.some((h) => new URL(h.url).pathname.startsWith('/callback/'))).toBe(true)
  })

  it('a refresh by resource goes only to the server that issued its tokens, whatever the resource names by then', async () => {
    expect(mcp.names).toBe(hostile.issuer)
    // The hostile server now has a client of the broker's too (any flow stored for the resource registers one).
    await storeAt(c.url, { resource: mcp.resource, callback: app.callback })
    expect(hostile.registrations.length).toBeGreaterThan(0)
    for (const record of <Array<Record<string, string>>>[
      { auth_leg: '2', grant_type: 'refresh_token', refresh_token: delivered.refresh_token!, resource: mcp.resource },
      // The same with the client_id the app received (a public client, as an app may send it).
      {
        auth_leg: '2',
        grant_type: 'refresh_token',
        refresh_token: delivered.refresh_token!,
        resource: mcp.resource,
        client_id: delivered.client_id!,
        client_auth: 'none',
      },
    ]) {
      const { status, body } = await postStore(c.url, record)
      expect(status, JSON.stringify(body)).toBe(400)
      expect(body.fields?.resource).toContain(`came from ${honest.issuer}`)
    }
    expect(hostile.tokenCalls).toEqual([])
    // With the issuer delivered with the tokens, the refresh goes there.
    const { hash } = await storeAt(c.url, {
      auth_leg: '2',
      grant_type: 'refresh_token',
      refresh_token: delivered.refresh_token!,
      resource: mcp.resource,
      issuer: delivered.issuer!,
    })
    const refreshed = await fetch(`${c.url}/start?hash=${hash}`)
    const got = (await refreshed.json()) as Record<string, string>
    expect(refreshed.status, JSON.stringify(got)).toBe(200)
    expect(got.access_token).toBe('honest-at-refreshed')
    expect(honest.tokenCalls.at(-1)!.params).toMatchObject({ grant_type: 'refresh_token', refresh_token: 'honest-rt' })
    expect(hostile.tokenCalls).toEqual([])
  })
})

describe('a hostile authorization server that borrows the honest one', () => {
  it("refuses metadata naming another origin's authorization endpoint for a client the broker registers, registering nothing", async () => {
    const evil = await startTestAuthorizationServer('evil-authorize')
    stops.push(evil.stop)
    evil.metadata = { authorization_endpoint: `${honest.issuer}/authorize` }
    const mcp = await hostileResource(evil.issuer)
    const { status, body } = await postStore(a.url, { resource: mcp.resource, callback: app.callback })
    expect(status, JSON.stringify(body)).toBe(400)
    expect(body.fields?.authorize_url).toContain(`another origin (${honest.issuer})`)
    expect(evil.registrations).toEqual([])
  })

  it('refuses a registration answering a client_id the broker keeps at another server (502), keeping nothing', async () => {
    // The honest server's client, readable from any /start Location.
    const mcpHonest = await hostileResource(honest.issuer)
    const { url } = await storeAt(a.url, { resource: mcpHonest.resource, callback: app.callback })
    const start = await fetch(url, { redirect: 'manual' })
    const honestClient = new URL(start.headers.get('location')!).searchParams.get('client_id')!
    expect(honestClient).toMatch(/^honest-client-/)

    const evil = await startTestAuthorizationServer('evil-register')
    stops.push(evil.stop)
    evil.clientId = honestClient
    const mcp = await hostileResource(evil.issuer)
    const { status, body } = await postStore(a.url, { resource: mcp.resource, callback: app.callback })
    expect(status, JSON.stringify(body)).toBe(502)
    expect(body.message).toContain('keeps for another authorization server')
    // Nothing kept: the next /store asks again (and is refused again).
    expect((await postStore(a.url, { resource: mcp.resource, callback: app.callback })).status).toBe(502)
    expect(evil.registrations).toHaveLength(2)
  })

  it("a code of the honest server's client never comes back to a hostile server's flow (a redirect URI per issuer)", async () => {
    // The honest server's client and its redirect URI at the broker.
    const mcpHonest = await hostileResource(honest.issuer)
    const first = await storeAt(a.url, { resource: mcpHonest.resource, callback: app.callback })
    const honestStart = new URL((await fetch(first.url, { redirect: 'manual' })).headers.get('location')!)
    const honestClient = honestStart.searchParams.get('client_id')!
    const honestRedirect = honestStart.searchParams.get('redirect_uri')!

    const evil = await startTestAuthorizationServer('evil-bounce')
    stops.push(evil.stop)
    const mcp = await hostileResource(evil.issuer)
    for (const redirect of ['its own', "the honest client's"]) {
      // Its /authorize sends the user on to the honest server, with the honest client and this flow's state and challenge.
      evil.authorize = (q) => {
        const to = new URL(`${honest.issuer}/authorize`)
        for (const [k, v] of q) to.searchParams.set(k, v)
        to.searchParams.set('client_id', honestClient)
        if (redirect !== 'its own') to.searchParams.set('redirect_uri', honestRedirect)
        return to.toString()
      }
      const { hash } = await storeAt(a.url, { resource: mcp.resource, callback: app.callback })
      const res = await new Browser().go(`${a.url}/start?hash=${hash}`)
      // Either the honest server refuses the redirect URI, or the broker refuses the code at the honest one's.
      expect(res.status, `${redirect}: ${res.body}`).toBe(400)
      if (redirect === 'its own') expect(new URL(res.url).origin).toBe(honest.issuer)
      else expect(JSON.parse(res.body)).toMatchObject({ code: 'UNKNOWN_STATE' })
    }
    // What it got at its token endpoint: the broker's checks that it still knows its own client, never a code.
    expect(evil.tokenCalls.filter((c) => !c.params.code?.startsWith('broker-probe-'))).toEqual([])
  })
})

describe('smaller findings', () => {
  it('token_params and authorize_params carry no client authentication (one app could drop the shared client)', async () => {
    for (const field of ['token_params', 'authorize_params']) {
      const { status, body } = await postStore(a.url, {
        auth_leg: '2',
        grant_type: 'refresh_token',
        refresh_token: 'x',
        issuer: honest.issuer,
        [field]: '{"client_secret":"x"}',
      })
      expect(status, JSON.stringify(body)).toBe(400)
      expect(body.fields?.[field]).toContain('may not carry client_secret')
    }
  })

  it("a record's client_name names no shared registration; one refused for its callback registers nothing", async () => {
    const fresh = await startTestAuthorizationServer('named')
    stops.push(fresh.stop)
    const mcp = await hostileResource(fresh.issuer)
    const refused = await postStore(a.url, {
      resource: mcp.resource,
      callback: 'https://attacker.example/cb',
      client_name: 'Your Bank - Security Check',
    })
    expect(refused.status, JSON.stringify(refused.body)).toBe(400)
    expect(fresh.registrations).toEqual([])
    await storeAt(a.url, { resource: mcp.resource, callback: app.callback, client_name: 'Your Bank - Security Check' })
    expect(fresh.registrations).toHaveLength(1)
    expect(fresh.registrations[0]!.client_name).toBe('broker')
  })
})

describe('client ID metadata documents (draft-ietf-oauth-client-id-metadata-document)', () => {
  it("are used where the server takes them: the broker's https URL is the client_id, and nothing is registered", async () => {
    const port = await freePort()
    const https = await startBroker({
      port,
      args: ['--store', 'memory', '--protocol', 'https', '--host', `127.0.0.1:${port}`],
      env: { BROKER_REGISTRATION_LOGOURI: 'https://broker.example/logo.png' },
    })
    const cimd = await startTestAuthorizationServer('cimd')
    stops.push(cimd.stop, () => https.stop())
    cimd.documents = []
    // The broker listens on plain http here, behind what would be its TLS front.
    cimd.fetchDocument = (url) => fetch(url.replace('https://', 'http://'))
    const mcp = await hostileResource(cimd.issuer)
    const { url } = await storeAt(`http://127.0.0.1:${port}`, { resource: mcp.resource, callback: app.callback })
    const start = await fetch(url.replace('https://', 'http://'), { redirect: 'manual' })
    const cookie = start.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ')
    const authorize = new URL(start.headers.get('location')!)
    const clientId = authorize.searchParams.get('client_id')!
    expect(clientId).toMatch(new RegExp(`^https://127\\.0\\.0\\.1:${port}/clients/[\\w-]{22}$`))
    const back = await fetch(authorize, { redirect: 'manual' })
    expect(back.status, await back.clone().text()).toBe(302)
    expect(cimd.documents).toEqual([
      {
        client_id: clientId,
        client_name: 'broker',
        redirect_uris: [authorize.searchParams.get('redirect_uri')],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
        logo_uri: 'https://broker.example/logo.png',
      },
    ])
    const done = await fetch(back.headers.get('location')!.replace('https://', 'http://'), {
      headers: { cookie },
      redirect: 'manual',
    })
    const delivered = new URL(done.headers.get('location')!)
    expect(delivered.searchParams.get('access_token')).toBe('cimd-at')
    expect(delivered.searchParams.get('client_id')).toBe(clientId)
    expect(cimd.registrations).toEqual([])
    expect(cimd.tokenCalls.at(-1)!.params).toMatchObject({ client_id: clientId, grant_type: 'authorization_code' })
  })

  it('are not used by a broker served over http: it registers, and /hash-check says why', async () => {
    const cimd = await startTestAuthorizationServer('cimd-http')
    stops.push(cimd.stop)
    cimd.documents = []
    const mcp = await hostileResource(cimd.issuer)
    const { hash } = await storeAt(a.url, { resource: mcp.resource, callback: app.callback })
    expect(cimd.registrations).toHaveLength(1)
    const check = (await (await fetch(`${a.url}/hash-check?hash=${hash}`)).json()) as {
      discovery: { notes?: string[] }
    }
    expect(check.discovery.notes?.join(' ')).toContain('client ID metadata documents')
  })
})
