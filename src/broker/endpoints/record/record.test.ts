import { describe, expect, it } from 'vitest'
import { configSchema } from '../../../config/schema.js'
import { BrokerError } from '../../../errors/index.js'
import { FlowError } from '../../../../flows/contract.js'
import { compilePolicy } from '../../outbound/policy.js'
import { destinationProblems } from '../../outbound/record-check.js'
import { recordPluginName } from '../plugins.js'
import { callbackAllowed, sanitizeRecord, validateRecord } from './index.js'

const config = (allow?: string[]) => configSchema.parse({ callbacks: { allow } })

const problem = (fn: () => unknown): BrokerError => {
  try {
    fn()
  } catch (e) {
    return e as BrokerError
  }
  throw new Error('expected an error')
}

describe('sanitizeRecord', () => {
  it('defaults and lowercases auth_type, and composes the plugin name', () => {
    const r = sanitizeRecord({ auth_type: 'OAuth', auth_version: 2, auth_leg: '3' })
    expect(r.auth_type).toBe('oauth')
    expect(recordPluginName(r)).toBe('oauth_2_3-legged')
    expect(recordPluginName(sanitizeRecord({ auth_flow: 'owner_resources', auth_version: '2' }))).toBe(
      'oauth_owner_resources_2',
    )
    expect(recordPluginName(sanitizeRecord({ auth_flow: 'echo', auth_version: '1' }))).toBe('oauth_echo_1')
  })

  it.each([
    ['auth_type', '../etc'],
    ['auth_flow', 'x/y'],
    ['auth_version', '2a'],
    ['auth_leg', '3\u0000'],
  ])('refuses %s = %j naming the field', (field, value) => {
    const err = problem(() => sanitizeRecord({ [field]: value }))
    expect(err.code).toBe('VALIDATION')
    expect(err.details?.fields).toHaveProperty(field)
  })

  it('refuses objects where text is expected', () => {
    expect(problem(() => sanitizeRecord({ client_id: { a: 1 } })).details?.fields).toHaveProperty('client_id')
  })
})

describe('callbackAllowed', () => {
  it('allows only loopback without callbacks.allow', () => {
    expect(callbackAllowed('http://localhost:9999/cb', config())).toBe(true)
    expect(callbackAllowed('http://127.0.0.1/cb', config())).toBe(true)
    expect(callbackAllowed('http://[::1]:80/cb', config())).toBe(true)
    expect(callbackAllowed('https://evil.example/cb', config())).toBe(false)
  })

  it('matches origins exactly and prefixes on a path boundary', () => {
    const c = config(['https://app.example.com', 'https://b.example.com/oauth'])
    expect(callbackAllowed('https://app.example.com/any/path', c)).toBe(true)
    expect(callbackAllowed('https://app.example.com:8443/cb', c)).toBe(false)
    expect(callbackAllowed('https://b.example.com/oauth/cb', c)).toBe(true)
    expect(callbackAllowed('https://b.example.com/oauthevil', c)).toBe(false)
    expect(callbackAllowed('https://app.example.com.evil.net/cb', c)).toBe(false)
    expect(callbackAllowed('http://localhost/cb', c)).toBe(false)
  })
})

describe("validateRecord: a provider failing in a plugin's validate", () => {
  const failing = (err: FlowError) => ({ start: () => ({ deliver: {} }), validate: () => Promise.reject(err) })
  const record = sanitizeRecord({ auth_version: '2', auth_leg: '3' })

  it.each([
    [new FlowError({ description: 'Discovery for https://id.example failed' }), 'PROVIDER_ERROR', 502],
    [
      new FlowError({ brokerCode: 'PROVIDER_TIMEOUT', description: 'https://id.example did not answer' }),
      'PROVIDER_TIMEOUT',
      504,
    ],
    [
      new FlowError({ brokerCode: 'PROVIDER_NOT_ALLOWED', description: 'http://id.internal is not a provider' }),
      'PROVIDER_NOT_ALLOWED',
      400,
    ],
  ])("answers /store with the provider's error, its words kept", async (err, code, status) => {
    const e = await validateRecord(record, failing(err), config(), { refusals: 0 }).catch(
      (x: unknown) => x as BrokerError,
    )
    expect(e).toBeInstanceOf(BrokerError)
    expect((e as BrokerError).code).toBe(code)
    expect((e as BrokerError).status).toBe(status)
    expect((e as BrokerError).message).toBe(err.description)
  })

  it('hands validate the guarded fetch and the providers.allow check', async () => {
    let seen: unknown
    const plugin = { start: () => ({ deliver: {} }), validate: (_: unknown, io: unknown) => ((seen = io), {}) }
    await validateRecord(record, plugin, config(), { refusals: 0 })
    expect(seen).toMatchObject({ http: expect.any(Function), allowed: expect.any(Function) })
    expect((seen as { allowed(u: string): boolean }).allowed('ftp://x')).toBe(false)
  })
})

describe('validateRecord with the destinations checked before it', () => {
  // A broker that listens beyond loopback: an internal issuer is refused without providers.allow.
  const policy = compilePolicy(configSchema.parse({ listen: '0.0.0.0', api: { open: true } }))
  const record = sanitizeRecord({ auth_version: '2', auth_leg: '3', issuer: 'http://10.0.0.1' })
  const refused = destinationProblems(record, policy)
  const refusal = (validated: Promise<void>): Promise<BrokerError> =>
    validated.then(
      () => Promise.reject(new Error('expected the record refused')),
      (x: unknown) => x as BrokerError,
    )

  it("never runs the plugin's validation (which fetches metadata) for a record naming a refused issuer", async () => {
    let ran = false
    const plugin = { start: () => ({ deliver: {} }), validate: () => ((ran = true), {}) }
    const e = await refusal(validateRecord(record, plugin, config(), refused))
    expect(e.code).toBe('PROVIDER_NOT_ALLOWED')
    expect(ran).toBe(false)
  })

  it("names the destinations' problems beside every other field in one VALIDATION", async () => {
    const plugin = { required: ['client_id'], start: () => ({ deliver: {} }) }
    const e = await refusal(validateRecord(record, plugin, config(), refused))
    expect(e.code).toBe('VALIDATION')
    expect(Object.keys(e.details?.fields as object).sort()).toEqual(['client_id', 'issuer'])
  })
})
