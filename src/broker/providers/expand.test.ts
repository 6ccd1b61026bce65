import { describe, expect, it } from 'vitest'
import type { FlowContext, HttpRequest } from '../../../flows/contract.js'
import twoLegged from '../../../flows/oauth_2_2-legged.js'
import { BrokerError } from '../../errors/index.js'
import { catalogue } from './catalogue.js'
import { expandProvider, findProvider, providerNeeds } from './expand.js'

/** The `fields` of the VALIDATION error expandProvider throws for `record`. */
function problems(record: Record<string, unknown>): Record<string, string> {
  try {
    expandProvider({ auth_type: 'oauth', ...record })
  } catch (err) {
    if (err instanceof BrokerError && err.code === 'VALIDATION')
      return (err.details as { fields: Record<string, string> }).fields
    throw err
  }
  throw new Error('no error thrown')
}

describe('provider catalogue', () => {
  it("holds Grant's providers with the broker's presets on top", () => {
    const all = catalogue()
    expect(all.size).toBeGreaterThan(200)
    expect(all.get('23andme')).toMatchObject({ oauth: 2, source: 'grant', scope_separator: ' ' })
    expect(all.get('500px')).toMatchObject({ oauth: 1, source: 'grant' })
    // Grant's default separator is a comma; the GitHub preset knows better.
    expect(all.get('github')).toMatchObject({ source: 'grant+preset', scope_separator: ' ' })
    expect(all.get('x2')?.record).toMatchObject({ client_auth: 'basic' })
    expect(all.get('x')).toMatchObject({ oauth: 1, source: 'preset' })
    expect(all.get('okta')?.subdomain).toBe(true)
  })
})

describe('expandProvider', () => {
  it('leaves a record without provider untouched (same object)', () => {
    const record = { auth_type: 'oauth', auth_version: '2', scope: 'a b' }
    expect(expandProvider(record)).toBe(record)
  })

  it('fills the flow and URLs, the record winning', () => {
    const out = expandProvider({ auth_type: 'oauth', provider: 'GitHub', client_id: 'c', access_url: 'https://mine/t' })
    expect(out).toMatchObject({
      provider: 'github',
      auth_version: '2',
      auth_leg: '3',
      authorize_url: 'https://github.com/login/oauth/authorize',
      access_url: 'https://mine/t',
    })
  })

  it('keeps preset knowledge: client_auth, authorize_params merged under the record', () => {
    expect(expandProvider({ auth_type: 'oauth', provider: 'x2' }).client_auth).toBe('basic')
    const google = expandProvider({ auth_type: 'oauth', provider: 'google', authorize_params: 'prompt=none&hd=x.org' })
    expect(google.authorize_params).toEqual({ access_type: 'offline', prompt: 'none', hd: 'x.org' })
  })

  it('fills [subdomain] from the subdomain field, and checks it', () => {
    expect(expandProvider({ auth_type: 'oauth', provider: 'okta', subdomain: 'acme' }).access_url).toBe(
      'https://acme.okta.com/oauth2/v1/token',
    )
    expect(
      expandProvider({ auth_type: 'oauth', provider: 'keycloak', subdomain: 'id.acme.org:8443/realms/main' })
        .authorize_url,
    ).toBe('https://id.acme.org:8443/realms/main/protocol/openid-connect/auth')
    expect(problems({ provider: 'okta' }).subdomain).toMatch(/^is required by provider "okta"/)
    expect(problems({ provider: 'okta', subdomain: 'evil.com/x?' }).subdomain).toMatch(/^must be DNS labels/)
    expect(problems({ provider: 'keycloak', subdomain: 'a@evil.com' }).subdomain).toMatch(/^must be a host/)
    expect(providerNeeds({ auth_type: 'oauth' }, findProvider('okta')!)).toEqual(['subdomain'])
    expect(providerNeeds({ auth_type: 'oauth' }, findProvider('github')!)).toEqual([])
  })

  it('names an unknown provider and a version that does not fit', () => {
    expect(problems({ provider: 'myspace' })).toEqual({
      provider: 'is not a known provider ("myspace"); broker store --list-providers lists them',
    })
    expect(problems({ provider: 'twitter', auth_version: '2' }).auth_version).toBe(
      'is 2, but provider "twitter" speaks OAuth 1',
    )
  })

  it("joins a scope list with the provider's separator, else a space", () => {
    expect(expandProvider({ auth_type: 'oauth', provider: 'facebook', scope: ['email', 'public_profile'] }).scope).toBe(
      'email,public_profile',
    )
    expect(expandProvider({ auth_type: 'oauth', scope: ['a', 'b'] }).scope).toBe('a b')
    expect(problems({ scope: { a: 1 } }).scope).toBe('must be text, or a list of scope names')
  })
})

describe('profile_url from the catalogue', () => {
  it('fills the preset profile_url only for a record with profile: true, the record winning', () => {
    const github = { auth_type: 'oauth', provider: 'github', client_id: 'c' }
    expect(expandProvider({ ...github, profile: true }).profile_url).toBe('https://api.github.com/user')
    expect(expandProvider({ ...github, profile: 'yes' }).profile_url).toBe('https://api.github.com/user')
    // Unused, it is not filled: providers.allow never refuses a URL the flow will not call.
    expect(expandProvider(github).profile_url).toBeUndefined()
    expect(expandProvider({ ...github, profile: false }).profile_url).toBeUndefined()
    expect(
      expandProvider({ ...github, profile: true, profile_url: 'https://ghe.example/api/v3/user' }).profile_url,
    ).toBe('https://ghe.example/api/v3/user')
    // A provider whose preset has no profile endpoint fills none.
    expect(expandProvider({ auth_type: 'oauth', provider: 'slack', profile: true }).profile_url).toBeUndefined()
  })

  it('a catalogue flow with profile: true GETs the preset profile_url with the token', async () => {
    const record = expandProvider({
      auth_type: 'oauth',
      provider: 'github',
      auth_leg: '2',
      access_url: 'https://token.example/token',
      client_id: 'c',
      client_secret: 's',
      profile: true,
    })
    const sent: Array<{ url: string; request: HttpRequest }> = []
    const ctx: FlowContext = {
      record,
      data: {},
      callbackUrl: 'http://localhost:3000/callback',
      state: 's',
      params: {},
      allowed: () => true,
      http: async (url, request = {}) => {
        sent.push({ url, request })
        const body = url.startsWith('https://token.example')
          ? { access_token: 'gho_1', token_type: 'bearer' }
          : { login: 'octocat', id: 1 }
        return { status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }
      },
    }
    const step = await twoLegged.start(ctx)
    expect(step).toMatchObject({ deliver: { access_token: 'gho_1', profile: { login: 'octocat', id: 1 } } })
    expect(sent[1]).toMatchObject({
      url: 'https://api.github.com/user',
      request: { method: 'GET', headers: { authorization: 'Bearer gho_1' } },
    })
  })
})
