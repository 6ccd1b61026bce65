import { describe, expect, it } from 'vitest'
import { FlowError, type HttpRequest, type Registration, type Registrations } from '../../contract.js'
import type { Endpoints } from '../oidc/index.js'
import {
  clientCredentialsProblem,
  clientIdProblem,
  droppingInvalid,
  foreignAuthorizeProblem,
  issuerRedirect,
  keptClientProblem,
  registeredClient,
} from './index.js'

const CALLBACK = 'http://localhost:3000/callback'
/** The code flow's redirect URI at https://as.example: the callback with that issuer's own segment. */
const AS_CALLBACK = issuerRedirect(CALLBACK, 'https://as.example')
const e = (over: Partial<Endpoints> = {}): Endpoints => ({
  issuer: 'https://as.example',
  token: 'https://as.example/token',
  registration: 'https://as.example/reg',
  usePar: false,
  issAlways: false,
  ...over,
})

function memory(): Registrations & { kept: Map<string, Registration> } {
  const kept = new Map<string, Registration>()
  const links = new Map<string, string>()
  return {
    kept,
    clientName: 'broker',
    recheckSeconds: 10,
    admitNew: async () => undefined,
    confirm: async (i, r, g = 'authorization_code') => {
      const reg = kept.get(`${i} ${r} ${g}`)
      if (reg) kept.set(`${i} ${r} ${g}`, { ...reg, unused: undefined })
    },
    owner: async (c) => links.get(`owner ${c}`),
    bindResource: async (res, r, i) => {
      const bound = links.get(`res ${res} ${r}`) ?? i
      links.set(`res ${res} ${r}`, bound)
      return bound
    },
    resourceIssuer: async (res, r) => links.get(`res ${res} ${r}`),
    get: async (i, r, g = 'authorization_code') => kept.get(`${i} ${r} ${g}`),
    put: async (i, r, reg, _at, g = 'authorization_code') => {
      kept.set(`${i} ${r} ${g}`, reg)
      links.set(`owner ${reg.client_id}`, i)
    },
    drop: async (i, r, g = 'authorization_code') => void kept.delete(`${i} ${r} ${g}`),
  }
}

function io(record: Record<string, unknown>, answer: Record<string, unknown>, status = 201) {
  const sent: { url: string; request?: HttpRequest }[] = []
  const registrations = memory()
  return {
    sent,
    registrations,
    io: {
      record: { auth_type: 'oauth', ...record },
      callbackUrl: CALLBACK,
      registrations,
      http: async (url: string, request?: HttpRequest) => {
        sent.push({ url, request })
        return { status, headers: { 'content-type': 'application/json' }, body: JSON.stringify(answer) }
      },
    },
  }
}

describe('dynamic client registration (RFC 7591)', () => {
  it('registers the callback as a public code-flow client when the server lists none, and reuses it', async () => {
    const t = io({ client_name: 'my app' }, { client_id: 'dyn-1', token_endpoint_auth_method: 'none' })
    const client = await registeredClient(t.io, e({ authMethods: ['none', 'client_secret_basic'] }))
    expect(client).toEqual({ client_id: 'dyn-1', client_auth: 'none', redirect_uri: AS_CALLBACK, unused: true })
    expect(JSON.parse(t.sent[0]!.request!.body!)).toEqual({
      redirect_uris: [AS_CALLBACK],
      // The deployment's name, never the record's (one record named the client every user consents to).
      client_name: 'broker',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    })
    expect(await registeredClient(t.io, e())).toEqual(client)
    expect(t.sent).toHaveLength(1)
  })

  it('keptOnly (a refresh) uses the kept client and never registers one: none kept is a VALIDATION naming client_id', async () => {
    const t = io({}, { client_id: 'dyn-new' })
    const refused = await registeredClient(t.io, e(), { keptOnly: true }).catch((err: unknown) => err)
    expect(refused).toBeInstanceOf(FlowError)
    expect(refused).toMatchObject({ brokerCode: 'VALIDATION' })
    expect((refused as FlowError).description).toMatch(/client_id is required for a refresh: .*https:\/\/as.example/)
    expect(t.sent).toHaveLength(0)
    expect(await keptClientProblem(t.io.record, e(), t.io)).toEqual({
      client_id: expect.stringContaining('as.example'),
    })
    await t.registrations.put('https://as.example', AS_CALLBACK, { client_id: 'dyn-kept' })
    expect(await registeredClient(t.io, e(), { keptOnly: true })).toEqual({
      client_id: 'dyn-kept',
      client_auth: 'none',
      redirect_uri: AS_CALLBACK,
    })
    expect(await keptClientProblem(t.io.record, e(), t.io)).toEqual({})
    expect(t.sent).toHaveLength(0)
  })

  it('asks for client_secret_basic when none is not listed, and uses the secret it gets', async () => {
    const t = io({}, { client_id: 'dyn-2', client_secret: 's3cret' })
    const client = await registeredClient(t.io, e({ authMethods: ['client_secret_basic'] }))
    expect(JSON.parse(t.sent[0]!.request!.body!)).toMatchObject({
      client_name: 'broker',
      token_endpoint_auth_method: 'client_secret_basic',
    })
    expect(client).toEqual({
      client_id: 'dyn-2',
      client_secret: 's3cret',
      client_auth: 'client_secret_basic',
      redirect_uri: AS_CALLBACK,
      unused: true,
    })
  })

  it("fails with the server's own words when it refuses, and keeps nothing", async () => {
    const t = io({}, { error: 'invalid_redirect_uri', error_description: 'not https' }, 400)
    await expect(registeredClient(t.io, e())).rejects.toThrow(
      /registration at https:\/\/as.example was refused: not https/,
    )
    expect(t.registrations.kept.size).toBe(0)
  })

  it('drops a kept registration the token endpoint answers invalid_client for, and only that one', async () => {
    const t = io({}, { client_id: 'dyn-3' })
    const client = await registeredClient(t.io, e())
    const refuse = () => Promise.reject(new FlowError({ oauthError: 'invalid_client', description: 'unknown client' }))
    await expect(droppingInvalid(t.io, e(), client, refuse)).rejects.toThrow('unknown client')
    expect(t.registrations.kept.size).toBe(0)
    // Another flow registered meanwhile: its registration stays.
    await t.registrations.put('https://as.example', AS_CALLBACK, { client_id: 'dyn-4' })
    await expect(droppingInvalid(t.io, e(), client, refuse)).rejects.toThrow('unknown client')
    expect(t.registrations.kept.size).toBe(1)
  })

  it('registers a confidential client of client_credentials alone, no redirect URI, kept apart from the code flow', async () => {
    const t = io(
      {},
      { client_id: 'cc-1', client_secret: 'cc-secret', token_endpoint_auth_method: 'client_secret_basic' },
    )
    await t.registrations.put('https://as.example', AS_CALLBACK, { client_id: 'code-1' })
    const listed = e({ authMethods: ['none', 'private_key_jwt', 'client_secret_basic'] })
    const client = await registeredClient(t.io, listed, { grant: 'client_credentials' })
    expect(client).toEqual({
      client_id: 'cc-1',
      client_secret: 'cc-secret',
      client_auth: 'client_secret_basic',
      unused: true,
    })
    expect(JSON.parse(t.sent[0]!.request!.body!)).toEqual({
      client_name: 'broker',
      grant_types: ['client_credentials'],
      response_types: [],
      token_endpoint_auth_method: 'client_secret_basic',
    })
    // Reused; the code flow's stays its own.
    expect(await registeredClient(t.io, listed, { grant: 'client_credentials' })).toEqual(client)
    expect(await registeredClient(t.io, listed)).toEqual({
      client_id: 'code-1',
      client_auth: 'none',
      redirect_uri: AS_CALLBACK,
    })
    // One registration; the kept code-flow client was confirmed at the token endpoint before use.
    expect(t.sent.map((s) => s.url)).toEqual(['https://as.example/reg', 'https://as.example/token'])
    // invalid_client drops the client credentials one only.
    const refuse = () => Promise.reject(new FlowError({ oauthError: 'invalid_client', description: 'unknown client' }))
    await expect(droppingInvalid(t.io, listed, client, refuse, 'client_credentials')).rejects.toThrow('unknown')
    expect([...t.registrations.kept.keys()]).toEqual([`https://as.example ${AS_CALLBACK} authorization_code`])
  })

  it('registers again when the server no longer knows the kept client (invalid_client for a code nobody issued)', async () => {
    const t = io({}, { client_id: 'old' })
    await t.registrations.put('https://as.example', AS_CALLBACK, { client_id: 'forgotten' })
    const answers: Array<[number, unknown]> = [
      [400, { error: 'invalid_client' }],
      [201, { client_id: 'fresh' }],
    ]
    const sent: string[] = []
    t.io.http = async (url: string, request?: HttpRequest) => {
      sent.push(`${url} ${request?.body ?? ''}`)
      const [status, body] = answers.shift()!
      return { status, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }
    }
    const client = await registeredClient(t.io, e({ issuer: 'https://as.example' }))
    expect(client?.client_id).toBe('fresh')
    expect(sent[0]).toMatch(/^https:\/\/as.example\/token .*grant_type=authorization_code.*code=broker-probe-/)
    expect(sent[0]).toContain('client_id=forgotten')
    expect(sent[1]).toMatch(/^https:\/\/as.example\/reg /)
  })

  it('keeps the kept client when the server answers anything but invalid_client, and asks no more for a while', async () => {
    const t = io({}, { client_id: 'x' })
    await t.registrations.put('https://as2.example', issuerRedirect(CALLBACK, 'https://as2.example'), {
      client_id: 'still-here',
    })
    let probes = 0
    t.io.http = async () => {
      probes++
      return {
        status: 400,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ error: 'invalid_grant' }),
      }
    }
    const at = e({ issuer: 'https://as2.example', token: 'https://as2.example/token' })
    expect((await registeredClient(t.io, at))?.client_id).toBe('still-here')
    expect((await registeredClient(t.io, at))?.client_id).toBe('still-here')
    expect(probes).toBe(1)
  })

  it('gives each issuer its own redirect URI (RFC 9700 §4.4.2): a code comes back only for the server it was asked of', () => {
    const a = issuerRedirect(CALLBACK, 'https://as.example')
    const b = issuerRedirect(CALLBACK, 'https://evil.example')
    expect(a).toMatch(/^http:\/\/localhost:3000\/callback\/[\w-]{22}$/)
    expect(b).not.toBe(a)
    expect(issuerRedirect(CALLBACK, 'https://as.example')).toBe(a)
  })

  it('refuses a registration answer with a client_id this broker keeps at another server, and keeps nothing (a mix-up)', async () => {
    const t = io({}, { client_id: 'honest-client', client_secret: 'evil' })
    await t.registrations.put('https://honest.example', issuerRedirect(CALLBACK, 'https://honest.example'), {
      client_id: 'honest-client',
    })
    const evil = e({ issuer: 'https://evil.example', registration: 'https://evil.example/reg' })
    await expect(registeredClient(t.io, evil)).rejects.toThrow(
      /client_id this broker keeps for another authorization server/,
    )
    expect(await t.registrations.get('https://evil.example', issuerRedirect(CALLBACK, 'https://evil.example'))).toBe(
      undefined,
    )
  })

  it("will not register where the metadata's authorization endpoint is on another origin than the issuer", async () => {
    const t = io({}, { client_id: 'dyn-x' })
    const mixed = e({ issuer: 'https://evil.example', authorize: 'https://honest.example/authorize' })
    expect(foreignAuthorizeProblem({ auth_type: 'oauth' }, mixed)).toEqual({
      authorize_url: expect.stringContaining('another origin (https://honest.example)'),
    })
    await expect(registeredClient(t.io, mixed)).rejects.toThrow(/another origin/)
    expect(t.sent).toHaveLength(0)
    // Its own client_id: the record decides; the same origin: no problem.
    expect(foreignAuthorizeProblem({ auth_type: 'oauth', client_id: 'c' }, mixed)).toEqual({})
    expect(foreignAuthorizeProblem({ auth_type: 'oauth' }, e({ authorize: 'https://as.example/a' }))).toEqual({})
  })

  it('never drops the shared registration for a request a record shaped with token_params', async () => {
    const t = io({ token_params: { client_secret: 'x' } }, { client_id: 'dyn-5' })
    const client = await registeredClient(t.io, e())
    const refuse = () => Promise.reject(new FlowError({ oauthError: 'invalid_client', description: 'bad secret' }))
    await expect(droppingInvalid(t.io, e(), client, refuse)).rejects.toThrow('bad secret')
    expect(t.registrations.kept.size).toBe(1)
  })

  it('registers a client credentials client with the secret method the server lists, and refuses one without a secret', async () => {
    const t = io({}, { client_id: 'cc-2', client_secret: 's' })
    await registeredClient(t.io, e({ authMethods: ['none', 'client_secret_post'] }), { grant: 'client_credentials' })
    expect(JSON.parse(t.sent[0]!.request!.body!)).toMatchObject({ token_endpoint_auth_method: 'client_secret_post' })

    const none = e({ authMethods: ['none', 'private_key_jwt'] })
    expect(clientCredentialsProblem({ auth_type: 'oauth' }, none)).toEqual({
      client_id: expect.stringMatching(/^is required: https:\/\/as.example lists no client_secret_basic/),
    })
    expect(clientCredentialsProblem({ auth_type: 'oauth', client_id: 'c' }, none)).toEqual({})

    const secretless = io({}, { client_id: 'cc-3' })
    await expect(registeredClient(secretless.io, e(), { grant: 'client_credentials' })).rejects.toThrow(
      /for client_credentials answered without a client_secret/,
    )
    expect(secretless.registrations.kept.size).toBe(0)
  })

  it('needs a client_id when the server offers no registration', () => {
    expect(clientIdProblem({ auth_type: 'oauth' }, e({ registration: undefined }))).toEqual({
      client_id: 'is required: https://as.example offers no dynamic client registration (no registration_endpoint)',
    })
    expect(clientIdProblem({ auth_type: 'oauth', client_id: 'c' }, e({ registration: undefined }))).toEqual({})
  })
})
