import { describe, expect, it } from 'vitest'
import { configSchema } from '../../config/schema.js'
import { BrokerError } from '../../errors.js'
import { callbackAllowed, recordPluginName, sanitizeRecord } from './record.js'

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
