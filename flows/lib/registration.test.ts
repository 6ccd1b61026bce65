import { describe, expect, it } from 'vitest'
import { FlowError, type HttpRequest, type Registration, type Registrations } from '../contract.js'
import type { Endpoints } from './oidc.js'
import { clientIdProblem, droppingInvalid, keptClientProblem, registeredClient } from './registration.js'

const CALLBACK = 'http://localhost:3000/callback'
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
  return {
    kept,
    get: async (i, r) => kept.get(`${i} ${r}`),
    put: async (i, r, reg) => void kept.set(`${i} ${r}`, reg),
    drop: async (i, r) => void kept.delete(`${i} ${r}`),
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
    expect(client).toEqual({ client_id: 'dyn-1', client_auth: 'none' })
    expect(JSON.parse(t.sent[0]!.request!.body!)).toEqual({
      redirect_uris: [CALLBACK],
      client_name: 'my app',
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
    await t.registrations.put('https://as.example', CALLBACK, { client_id: 'dyn-kept' })
    expect(await registeredClient(t.io, e(), { keptOnly: true })).toEqual({
      client_id: 'dyn-kept',
      client_auth: 'none',
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
    expect(client).toEqual({ client_id: 'dyn-2', client_secret: 's3cret', client_auth: 'client_secret_basic' })
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
    await t.registrations.put('https://as.example', CALLBACK, { client_id: 'dyn-4' })
    await expect(droppingInvalid(t.io, e(), client, refuse)).rejects.toThrow('unknown client')
    expect(t.registrations.kept.size).toBe(1)
  })

  it('needs a client_id when the server offers no registration', () => {
    expect(clientIdProblem({ auth_type: 'oauth' }, e({ registration: undefined }))).toEqual({
      client_id: 'is required: https://as.example offers no dynamic client registration (no registration_endpoint)',
    })
    expect(clientIdProblem({ auth_type: 'oauth', client_id: 'c' }, e({ registration: undefined }))).toEqual({})
  })
})
