import { describe, expect, it } from 'vitest'
import { FLOW_PRESETS, missingFields } from './presets.js'

describe('flow presets', () => {
  it('lists every missing required field at once', () => {
    expect(missingFields({ auth_type: 'oauth', auth_version: '2', auth_leg: '3' }, FLOW_PRESETS['oauth2-3'])).toEqual([
      'client_id',
      'authorize_url',
      'access_url',
    ])
  })

  it("leaves the endpoints to an issuer's metadata", () => {
    const record = { auth_type: 'oauth', auth_version: '2', auth_leg: '3', issuer: 'https://id.example' }
    expect(missingFields(record, FLOW_PRESETS['oauth2-3'])).toEqual(['client_id'])
  })

  it('wants a consumer secret for HMAC and a private key for RSA-SHA1', () => {
    const base = {
      auth_type: 'oauth',
      auth_version: '1',
      auth_leg: '2',
      consumer_key: 'ck',
      request_url: 'http://p/r',
      access_url: 'http://p/a',
    }
    expect(missingFields(base, FLOW_PRESETS['oauth1-2'])).toEqual(['consumer_secret'])
    expect(missingFields({ ...base, signature_method: 'rsa_sha1' }, FLOW_PRESETS['oauth1-2'])).toEqual(['private_key'])
  })

  it('maps the refresh preset to the 2-legged plugin with grant_type refresh_token', () => {
    expect(FLOW_PRESETS['oauth2-refresh']!.fields).toEqual({
      auth_version: '2',
      auth_leg: '2',
      grant_type: 'refresh_token',
    })
    expect(FLOW_PRESETS['oauth2-password']!.fields).toEqual({ auth_flow: 'owner_resources', auth_version: '2' })
  })
})
