import { describe, expect, it } from 'vitest'
import type { HttpAnswer, HttpRequest } from '../../contract.js'
import { checkedEndpoints, discover, endpointProblems, endpoints } from './index.js'

/** A provider that answers from a map of URL → JSON, 404 elsewhere; records what was asked. */
function fakeHttp(answers: Record<string, unknown>) {
  const asked: string[] = []
  const http = async (url: string, _req?: HttpRequest): Promise<HttpAnswer> => {
    asked.push(url)
    const body = answers[url]
    return body === undefined
      ? { status: 404, headers: {}, body: 'not found' }
      : { status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }
  }
  return { http, asked }
}

describe('discovery', () => {
  it("tries MCP's order for a resource's server: RFC 8414, then OpenID inserted, then appended", async () => {
    const issuer = 'https://as9.example/tenant'
    const { http, asked } = fakeHttp({
      'https://as9.example/tenant/.well-known/openid-configuration': { issuer, token_endpoint: `${issuer}/t` },
    })
    expect((await discover(issuer, http, 'mcp')).token_endpoint).toBe(`${issuer}/t`)
    expect(asked).toEqual([
      'https://as9.example/.well-known/oauth-authorization-server/tenant',
      'https://as9.example/.well-known/openid-configuration/tenant',
      'https://as9.example/tenant/.well-known/openid-configuration',
    ])
  })

  it("finds the same server with and without a trailing slash, and uses the metadata's form", async () => {
    const { http } = fakeHttp({
      'https://as10.example/.well-known/openid-configuration': {
        issuer: 'https://as10.example/',
        authorization_endpoint: 'https://as10.example/authorize',
        token_endpoint: 'https://as10.example/token',
      },
    })
    const e = await endpoints({ auth_type: 'oauth', issuer: 'https://as10.example' }, http)
    expect(e.issuer).toBe('https://as10.example/')
    expect(e.token).toBe('https://as10.example/token')
  })

  it('says which issuer the metadata names when it is another', async () => {
    const { http } = fakeHttp({
      'https://as11.example/.well-known/openid-configuration': { issuer: 'https://elsewhere.example/' },
    })
    await expect(discover('https://as11.example', http)).rejects.toThrow(
      /names the issuer "https:\/\/elsewhere.example\/"; give that issuer/,
    )
  })

  it("uses /authorize, /token and /register on a legacy MCP server's origin when it has no metadata at all", async () => {
    const { http } = fakeHttp({})
    const meta = await discover('https://as12.example', http, 'mcp', true)
    expect(meta).toEqual({
      issuer: 'https://as12.example',
      authorization_endpoint: 'https://as12.example/authorize',
      token_endpoint: 'https://as12.example/token',
      registration_endpoint: 'https://as12.example/register',
      token_endpoint_auth_methods_supported: ['none', 'client_secret_post', 'client_secret_basic'],
    })
    await expect(discover('https://as13.example', http)).rejects.toThrow(/answered 404/)
  })

  it('falls back to RFC 8414 (well-known segment before the path), then caches per issuer', async () => {
    const issuer = 'https://as1.example/tenant'
    const { http, asked } = fakeHttp({
      'https://as1.example/.well-known/oauth-authorization-server/tenant': { issuer, token_endpoint: `${issuer}/t` },
    })
    expect((await discover(issuer, http)).token_endpoint).toBe(`${issuer}/t`)
    expect(asked).toEqual([
      'https://as1.example/tenant/.well-known/openid-configuration',
      'https://as1.example/.well-known/oauth-authorization-server/tenant',
    ])
    await discover(issuer, http)
    expect(asked).toHaveLength(2)
  })

  it('refuses metadata that names another issuer, and says what each address answered', async () => {
    const { http } = fakeHttp({ 'https://as2.example/.well-known/openid-configuration': { issuer: 'https://evil' } })
    await expect(discover('https://as2.example', http)).rejects.toThrow(/names the issuer "https:\/\/evil"/)
    await expect(discover('https://as3.example', fakeHttp({}).http)).rejects.toThrow(
      /Discovery for https:\/\/as3.example failed: .*answered 404; .*answered 404/,
    )
  })

  it('lets record fields win, and checks discovered URLs against providers.allow', async () => {
    const issuer = 'https://as4.example'
    const { http } = fakeHttp({
      [`${issuer}/.well-known/openid-configuration`]: {
        issuer,
        authorization_endpoint: `${issuer}/auth`,
        token_endpoint: 'https://elsewhere.example/token',
        require_pushed_authorization_requests: true,
        pushed_authorization_request_endpoint: `${issuer}/par`,
        token_endpoint_auth_methods_supported: ['private_key_jwt'],
      },
    })
    const record = { auth_type: 'oauth', issuer, authorize_url: 'https://mine.example/a' }
    const e = await endpoints(record, http)
    expect(e).toMatchObject({ authorize: 'https://mine.example/a', usePar: true, par: `${issuer}/par` })
    expect((await endpoints({ ...record, par: 'false' }, http)).usePar).toBe(false)
    const allowed = (url: string) => !url.startsWith('https://elsewhere.example')
    expect(endpointProblems({ ...record, client_auth: 'basic' }, e, { authorize: true }, allowed)).toEqual({
      // A client_auth the metadata does not list is the token endpoint's to refuse, not /store's.
      access_url: 'is not in providers.allow: the issuer metadata gives https://elsewhere.example',
    })
  })

  it("keeps an issuer cached while anyone makes it read 300 others (no flush of everyone's cache)", async () => {
    const victim = 'https://victim.example'
    const { http, asked } = fakeHttp({
      [`${victim}/.well-known/openid-configuration`]: { issuer: victim, authorization_endpoint: `${victim}/a` },
      ...Object.fromEntries(
        Array.from({ length: 300 }, (_, i) => [
          `https://other${i}.example/.well-known/openid-configuration`,
          { issuer: `https://other${i}.example` },
        ]),
      ),
    })
    await discover(victim, http)
    for (let i = 0; i < 300; i++) await discover(`https://other${i}.example`, http)
    const before = asked.length
    await discover(victim, http)
    expect(asked).toHaveLength(before)
  })

  it('checks the metadata URLs again wherever a step uses them: a PROVIDER_NOT_ALLOWED FlowError, never the URL', async () => {
    const issuer = 'https://as5.example'
    const { http } = fakeHttp({
      [`${issuer}/.well-known/openid-configuration`]: {
        issuer,
        authorization_endpoint: 'https://evil.example/phish',
        token_endpoint: `${issuer}/t`,
      },
    })
    const allowed = (url: string) => url.startsWith(issuer)
    const record = { auth_type: 'oauth', issuer }
    await expect(checkedEndpoints(record, { http, allowed })).rejects.toMatchObject({
      brokerCode: 'PROVIDER_NOT_ALLOWED',
      description: 'The authorize_url is not in providers.allow: the issuer metadata gives https://evil.example',
    })
    // The record's own URL wins over the metadata's, and was checked at /store.
    expect((await checkedEndpoints({ ...record, authorize_url: `${issuer}/mine` }, { http, allowed })).authorize).toBe(
      `${issuer}/mine`,
    )
  })
})
