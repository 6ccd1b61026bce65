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

  it('leaves the endpoints and the client to the broker when a resource discovers them (RFC 9728, RFC 7591)', () => {
    const resource = 'https://mcp.example.com/mcp'
    const cc = { auth_type: 'oauth', auth_version: '2', auth_leg: '2', resource }
    expect(missingFields(cc, FLOW_PRESETS['oauth2-2'])).toEqual([])
    const refresh = { ...cc, grant_type: 'refresh_token', refresh_token: 'rt' }
    expect(missingFields(refresh, FLOW_PRESETS['oauth2-refresh'])).toEqual([])
    expect(missingFields({ ...cc, auth_leg: '3' }, FLOW_PRESETS['oauth2-3'])).toEqual([])
    // The device and password flows name their client themselves, and discover nothing from a resource.
    const device = { auth_type: 'oauth', auth_flow: 'device', auth_version: '2', resource }
    expect(missingFields(device, FLOW_PRESETS.device)).toEqual(['client_id', 'device_authorization_url', 'access_url'])
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

  it("wants a confidential client's secret, never a public client's", () => {
    const code = { auth_type: 'oauth', auth_version: '2', auth_leg: '3', client_id: 'c', issuer: 'https://id.example' }
    const preset = FLOW_PRESETS['oauth2-3']
    // PKCE only (no client_auth) and client_auth none: a public client.
    expect(missingFields(code, preset)).toEqual([])
    expect(missingFields({ ...code, client_auth: 'none' }, preset)).toEqual([])
    for (const client_auth of ['basic', 'client_secret_basic', 'post', 'client_secret_post', 'client_secret_jwt'])
      expect(missingFields({ ...code, client_auth }, preset), client_auth).toEqual(['client_secret'])
    expect(missingFields({ ...code, client_auth: 'basic', client_secret: 's' }, preset)).toEqual([])
    // A device (RFC 8628) is a public client unless it says how it authenticates.
    const device = {
      auth_type: 'oauth',
      auth_flow: 'device',
      auth_version: '2',
      client_id: 'tv',
      issuer: 'https://id.example',
    }
    expect(missingFields(device, FLOW_PRESETS.device)).toEqual([])
    expect(missingFields({ ...device, client_auth: 'none' }, FLOW_PRESETS.device)).toEqual([])
    expect(missingFields({ ...device, client_auth: 'basic' }, FLOW_PRESETS.device)).toEqual(['client_secret'])
    // Client credentials need the secret, unless the client signs with a key instead (or says it has none).
    const cc = { auth_type: 'oauth', auth_version: '2', auth_leg: '2', client_id: 'c', access_url: 'https://p/t' }
    expect(missingFields(cc, FLOW_PRESETS['oauth2-2'])).toEqual(['client_secret'])
    expect(missingFields({ ...cc, client_auth: 'private_key_jwt' }, FLOW_PRESETS['oauth2-2'])).toEqual([])
    expect(missingFields({ ...cc, client_auth: 'none' }, FLOW_PRESETS['oauth2-2'])).toEqual([])
  })

  it('wants the secret of a provider the catalogue calls confidential, unless the client says it has none or signs', () => {
    const urls = { authorize_url: 'https://gh.example/authorize', access_url: 'https://gh.example/token' }
    const code = { auth_type: 'oauth', auth_version: '2', auth_leg: '3', client_id: 'c', provider: 'github', ...urls }
    const preset = FLOW_PRESETS['oauth2-3']
    expect(missingFields(code, preset, { confidential: true })).toEqual(['client_secret'])
    expect(missingFields({ ...code, client_secret: 's' }, preset, { confidential: true })).toEqual([])
    expect(missingFields({ ...code, client_auth: 'none' }, preset, { confidential: true })).toEqual([])
    expect(missingFields({ ...code, client_auth: 'private_key_jwt' }, preset, { confidential: true })).toEqual([])
    expect(missingFields(code, preset)).toEqual([])
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
