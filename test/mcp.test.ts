import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type CallbackApp, startCallbackApp } from './helpers/app.js'
import { type BrokerProcess, startBroker } from './helpers/broker.js'
import { Browser } from './helpers/browser.js'
import { spawnCli } from './helpers/cli.js'
import { storeAt } from './helpers/flow-suite.js'
import { passInteractions, type StrictProvider, startStrictProvider } from './helpers/oidc-provider.js'
import { freePort } from './helpers/ports.js'
import { type ProtectedResourceServer, startProtectedResource } from './helpers/protected-resource.js'

// End to end: an MCP-shaped protected resource (RFC 9728) whose authorization server is panva's
// oidc-provider with open registration (RFC 7591) and resource indicators (RFC 8707), through
// `broker serve`; the record names nothing but the resource and the app's callback.
let broker: BrokerProcess
let op: StrictProvider
let app: CallbackApp
let mcp: ProtectedResourceServer

beforeAll(async () => {
  const [brokerPort, opPort] = await Promise.all([freePort(), freePort()])
  ;[op, app] = await Promise.all([
    startStrictProvider(opPort, `http://localhost:${brokerPort}/callback`),
    startCallbackApp(),
  ])
  mcp = await startProtectedResource(op.issuer, { scope: 'mcp:tools' })
  broker = await startBroker({ port: brokerPort, args: ['--store', 'memory'] })
}, 30_000)

afterAll(async () => {
  await broker?.stop()
  await Promise.all([op?.stop(), app?.close(), mcp?.stop()])
})

const registrations = () => op.requests.filter((r) => r === 'POST /reg').length

/** Runs a stored flow in a browser through the provider's login and consent; returns what the app got. */
async function run(record: Record<string, string>): Promise<Record<string, string>> {
  const { url } = await storeAt(broker.url, record)
  const browser = new Browser()
  const res = await passInteractions(browser, await browser.go(url))
  expect(res.body).toBe('app got it')
  return app.received.at(-1)!.query
}

/** What the protected resource answers to a request with `token`. */
async function callResource(resource: string, token: string): Promise<{ status: number; body: unknown }> {
  const res = await fetch(resource, { headers: { authorization: `Bearer ${token}` } })
  return { status: res.status, body: await res.json() }
}

describe('MCP authorization: resource alone is enough', () => {
  it('discovers, registers, names the resource, and the delivered token works at the resource', async () => {
    const before = registrations()
    const got = await run({ resource: mcp.resource, callback: app.callback })
    expect(got.error_description).toBeUndefined()
    expect(got.access_token).toBeTruthy()
    expect(got.resource).toBe(mcp.resource)
    expect(got.client_id).toBeTruthy()
    expect(got.client_secret).toBeUndefined()
    expect(registrations()).toBe(before + 1)
    // The challenge's own order: the 401 first, then the metadata it names.
    expect(mcp.requests.slice(0, 2)).toEqual(['GET /mcp', 'GET /meta/prm'])
    expect(await callResource(mcp.resource, got.access_token!)).toEqual({
      status: 200,
      body: { sub: 'alice', scope: 'mcp:tools' },
    })

    // A second flow reuses the kept registration.
    const again = await run({ resource: mcp.resource, callback: app.callback })
    expect(again.client_id).toBe(got.client_id)
    expect(registrations()).toBe(before + 1)

    // A refresh with the resource and no client_id uses the same registration, and names the resource.
    const { hash } = await storeAt(broker.url, {
      auth_leg: '2',
      grant_type: 'refresh_token',
      refresh_token: again.refresh_token!,
      resource: mcp.resource,
    })
    const res = await fetch(`${broker.url}/start?hash=${hash}`)
    const refreshed = (await res.json()) as Record<string, string>
    expect(res.status, JSON.stringify(refreshed)).toBe(200)
    expect(refreshed.client_id).toBe(got.client_id)
    expect(refreshed.resource).toBe(mcp.resource)
    expect((await callResource(mcp.resource, refreshed.access_token!)).status).toBe(200)
    expect(registrations()).toBe(before + 1)
  })

  it('refuses a refresh by resource where this broker delivered no tokens for it (400 naming issuer), and one with no client_id where none is kept, registering nothing', async () => {
    // A refresh token belongs to the client it was issued to: a client registered for the refresh could not use it.
    const got = await run({ resource: mcp.resource, callback: app.callback })
    const other = await startBroker({ args: ['--store', 'memory'] })
    try {
      const before = registrations()
      const refresh = {
        auth_leg: '2',
        grant_type: 'refresh_token',
        refresh_token: got.refresh_token!,
        resource: mcp.resource,
      }
      const res = await fetch(`${other.url}/store`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(refresh),
      })
      const body = (await res.json()) as { code: string; fields: Record<string, string> }
      expect(res.status, JSON.stringify(body)).toBe(400)
      expect(body.code).toBe('VALIDATION')
      // It delivered no tokens for the resource: the refresh token's server is the app's to name.
      expect(Object.keys(body.fields)).toEqual(['issuer'])
      expect(body.fields.issuer).toContain('give the issuer delivered with the tokens')
      // Named, and no client kept there: the client_id is the app's to give.
      const named = await fetch(`${other.url}/store`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ...refresh, issuer: got.issuer }),
      })
      const answer1 = (await named.json()) as { code: string; fields: Record<string, string> }
      expect(named.status, JSON.stringify(answer1)).toBe(400)
      expect(Object.keys(answer1.fields)).toEqual(['client_id'])
      expect(answer1.fields.client_id).toContain(op.issuer)
      expect(registrations()).toBe(before)
      // With the client_id the app received with the tokens, the same refresh works there.
      // Another broker delivered no tokens for the resource: the app names the server they came from.
      expect(got.issuer).toBe(op.issuer)
      const { hash } = await storeAt(other.url, {
        ...refresh,
        issuer: got.issuer!,
        client_id: got.client_id!,
        client_auth: 'none',
      })
      const answer = await fetch(`${other.url}/start?hash=${hash}`)
      const refreshed = (await answer.json()) as Record<string, string>
      expect(answer.status, JSON.stringify(refreshed)).toBe(200)
      expect((await callResource(mcp.resource, refreshed.access_token!)).status).toBe(200)
      expect(registrations()).toBe(before)
    } finally {
      await other.stop()
    }
  })

  it.each(['well-known-path', 'well-known-root'] as const)(
    'works with a resource that offers only its %s metadata, and the scope of scopes_supported',
    async (way) => {
      const only = await startProtectedResource(op.issuer, { way })
      try {
        const got = await run({ resource: only.resource, callback: app.callback })
        expect(got.resource).toBe(only.resource)
        const answer = await callResource(only.resource, got.access_token!)
        expect(answer).toEqual({ status: 200, body: { sub: 'alice', scope: 'mcp:tools mcp:read' } })
      } finally {
        await only.stop()
      }
    },
  )

  it('refuses at /store (502) metadata for another resource, and registers nothing', async () => {
    const liar = await startProtectedResource(op.issuer)
    liar.claimed = 'https://elsewhere.example/mcp'
    try {
      const before = registrations()
      const res = await fetch(`${broker.url}/store`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ resource: liar.resource, callback: app.callback }),
      })
      const body = (await res.json()) as { code: string; message: string }
      expect(res.status).toBe(502)
      expect(body.code).toBe('PROVIDER_ERROR')
      expect(body.message).toContain(`is for the resource "https://elsewhere.example/mcp", not ${liar.resource}`)
      expect(registrations()).toBe(before)
    } finally {
      await liar.stop()
    }
  })

  it('refuses at /store an authorization server the resource names outside providers.allow', async () => {
    const strict = await startBroker({ args: ['--store', 'memory', '--providers-allow', new URL(mcp.resource).origin] })
    try {
      const before = registrations()
      const res = await fetch(`${strict.url}/store`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ resource: mcp.resource, callback: app.callback }),
      })
      const body = (await res.json()) as { code: string; message: string }
      expect(res.status, JSON.stringify(body)).toBe(400)
      expect(body.code).toBe('PROVIDER_NOT_ALLOWED')
      expect(body.message).toContain(op.issuer)
      expect(registrations()).toBe(before)
    } finally {
      await strict.stop()
    }
  })

  it('client credentials with resource and no client_id: a confidential client of that grant, kept apart from the code flow', async () => {
    const codeFlow = await run({ resource: mcp.resource, callback: app.callback })
    const before = registrations()
    const cc = { auth_leg: '2', grant_type: 'client_credentials', resource: mcp.resource }
    const { hash } = await storeAt(broker.url, cc)
    // Registered at /store, as the code flow's client is: a server that refuses is told then.
    expect(registrations()).toBe(before + 1)
    const res = await fetch(`${broker.url}/start?hash=${hash}`)
    const got = (await res.json()) as Record<string, string>
    expect(res.status, JSON.stringify(got)).toBe(200)
    expect(got.resource).toBe(mcp.resource)
    expect(got.client_id).toBeTruthy()
    expect(got.client_id).not.toBe(codeFlow.client_id)
    expect(got.client_secret).toBeUndefined()
    // The token is the registered client's own, for the resource, with the scope of the resource's challenge.
    expect(await callResource(mcp.resource, got.access_token!)).toEqual({
      status: 200,
      body: { sub: got.client_id, scope: 'mcp:tools' },
    })

    // Without a grant_type: client credentials too, with the same kept client.
    const again = await storeAt(broker.url, { auth_leg: '2', auth_version: '2', resource: mcp.resource })
    const answer = (await (await fetch(`${broker.url}/start?hash=${again.hash}`)).json()) as Record<string, string>
    expect(answer.client_id).toBe(got.client_id)
    // The code flow still has its own client.
    expect((await run({ resource: mcp.resource, callback: app.callback })).client_id).toBe(codeFlow.client_id)
    expect(registrations()).toBe(before + 1)
  })

  it('refuses another grant with resource and no client_id at /store (400 naming client_id), registering nothing', async () => {
    const before = registrations()
    const res = await fetch(`${broker.url}/store`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        auth_leg: '2',
        grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
        resource: mcp.resource,
      }),
    })
    const body = (await res.json()) as { code: string; fields: Record<string, string> }
    expect(res.status, JSON.stringify(body)).toBe(400)
    expect(body.code).toBe('VALIDATION')
    expect(Object.keys(body.fields)).toEqual(['client_id'])
    expect(body.fields.client_id).toContain('client_credentials')
    expect(registrations()).toBe(before)
  })

  it('shows the resource in /hash-check, never a registration secret', async () => {
    const { hash } = await storeAt(broker.url, { resource: mcp.resource, callback: app.callback })
    const check = (await (await fetch(`${broker.url}/hash-check?hash=${hash}`)).json()) as {
      plugin: string
      record: Record<string, unknown>
    }
    expect(check.plugin).toBe('oauth_2_3-legged')
    expect(check.record.resource).toBe(mcp.resource)
    expect(JSON.stringify(check)).not.toMatch(/client_secret|registration_access_token/)
  })
})

describe('broker store --resource … --capture', () => {
  it('runs client credentials for an MCP server with --flow oauth2-2 and nothing but the resource', async () => {
    const run = spawnCli(['store', '--flow', 'oauth2-2', '--resource', mcp.resource, '--capture', '--json'], {
      env: { BROKER_URL: broker.url },
    })
    const { code, stdout, stderr } = await run.exited
    expect(code, stderr).toBe(0)
    const out = JSON.parse(stdout) as { plugin: string; captured: { result: Record<string, string> } }
    expect(out.plugin).toBe('oauth_2_2-legged')
    expect(out.captured.result.resource).toBe(mcp.resource)
    expect((await callResource(mcp.resource, out.captured.result.access_token!)).status).toBe(200)
  })

  it('captures a token for an MCP server in one command (--json prints it)', async () => {
    const run = spawnCli(['store', '--resource', mcp.resource, '--capture', '--json'], {
      env: { BROKER_URL: broker.url },
    })
    const [startUrl] = await run.waitFor(/http:\/\/\S+\/start\?hash=\S+/)
    const browser = new Browser()
    const page = await passInteractions(browser, await browser.go(startUrl!))
    expect(page.body).toContain('The result is in your terminal')
    const { code, stdout, stderr } = await run.exited
    expect(code, stderr).toBe(0)
    const out = JSON.parse(stdout) as { plugin: string; captured: { result: Record<string, string> } }
    expect(out.plugin).toBe('oauth_2_3-legged')
    expect(out.captured.result.resource).toBe(mcp.resource)
    expect((await callResource(mcp.resource, out.captured.result.access_token!)).status).toBe(200)
  })
})
