import { describe, expect, it } from 'vitest'
import type { HttpAnswer } from '../contract.js'
import { bearerChallenge, covers, discoverResource } from './resource.js'

const json = (body: unknown): HttpAnswer => ({ status: 200, headers: {}, body: JSON.stringify(body) })
const missing: HttpAnswer = { status: 404, headers: {}, body: '' }

/** A fake `http` answering by URL; it records what was asked. */
function fake(answers: Record<string, HttpAnswer>) {
  const asked: string[] = []
  const http = async (url: string) => {
    asked.push(url)
    return answers[url] ?? missing
  }
  return { http, asked }
}

describe('bearerChallenge', () => {
  it('reads quoted and token auth-params of the Bearer challenge, not of another scheme', () => {
    expect(
      bearerChallenge('Bearer error="invalid_token", resource_metadata="https://r.example/m?a=\\"b\\"", scope=read'),
    ).toEqual({ error: 'invalid_token', resource_metadata: 'https://r.example/m?a="b"', scope: 'read' })
    expect(bearerChallenge('DPoP algs="ES256", Bearer scope="a b"')).toEqual({ scope: 'a b' })
    expect(bearerChallenge('Bearer scope="x", DPoP algs="ES256"')).toEqual({ scope: 'x' })
    expect(bearerChallenge('Basic realm="x"')).toEqual({})
    expect(bearerChallenge(undefined)).toEqual({})
  })
})

describe('discoverResource (RFC 9728)', () => {
  it("follows the 401 challenge's resource_metadata, and takes the challenge's scope", async () => {
    const resource = 'https://mcp1.example/mcp'
    const { http, asked } = fake({
      [resource]: {
        status: 401,
        headers: { 'www-authenticate': 'Bearer resource_metadata="https://mcp1.example/meta", scope="tools"' },
        body: '',
      },
      'https://mcp1.example/meta': json({
        resource,
        authorization_servers: ['https://as.example'],
        scopes_supported: ['a'],
      }),
    })
    expect(await discoverResource(resource, http)).toEqual({
      issuer: 'https://as.example',
      scope: 'tools',
      send: resource,
    })
    expect(asked).toEqual([resource, 'https://mcp1.example/meta'])
  })

  it('falls back to the well-known URL with the path, then without, and to scopes_supported', async () => {
    const resource = 'https://mcp2.example/mcp/'
    const { http, asked } = fake({
      'https://mcp2.example/.well-known/oauth-protected-resource': json({
        resource,
        authorization_servers: ['https://as.example'],
        scopes_supported: ['a', 'b'],
      }),
    })
    expect(await discoverResource(resource, http)).toEqual({
      issuer: 'https://as.example',
      scope: 'a b',
      send: resource,
    })
    expect(asked).toEqual([
      resource,
      'https://mcp2.example/.well-known/oauth-protected-resource/mcp',
      'https://mcp2.example/.well-known/oauth-protected-resource',
    ])
  })

  it('refuses a document for another resource, naming both', async () => {
    const resource = 'https://mcp3.example/mcp'
    const { http } = fake({
      'https://mcp3.example/.well-known/oauth-protected-resource/mcp': json({
        resource: 'https://evil.example/mcp',
        authorization_servers: ['https://as.example'],
      }),
    })
    await expect(discoverResource(resource, http)).rejects.toThrow(
      /is for the resource "https:\/\/evil.example\/mcp", not https:\/\/mcp3.example\/mcp/,
    )
  })

  it('says why when discovery fails for another reason than a missing document', async () => {
    const { http } = fake({
      'https://mcp4.example/.well-known/oauth-protected-resource': { status: 500, headers: {}, body: '' },
    })
    await expect(discoverResource('https://mcp4.example/', http)).rejects.toThrow(
      /Discovery for the resource https:\/\/mcp4.example\/ failed: .*answered 500/,
    )
  })

  it('takes the origin as the authorization server when the server has no protected resource metadata (MCP 2025-03-26), sending no resource', async () => {
    const resource = 'https://mcp6.example/mcp'
    const { http } = fake({
      [resource]: { status: 401, headers: { 'www-authenticate': 'Bearer realm="mcp"' }, body: '' },
    })
    expect(await discoverResource(resource, http)).toEqual({ issuer: 'https://mcp6.example', legacy: true })
  })

  it("accepts the SDK's root document naming a same-origin prefix of the resource, and sends the document's resource", async () => {
    const resource = 'https://mcp7.example/mcp'
    const { http } = fake({
      'https://mcp7.example/.well-known/oauth-protected-resource': json({
        resource: 'https://mcp7.example/',
        authorization_servers: ['https://mcp7.example/'],
      }),
    })
    expect(await discoverResource(resource, http)).toEqual({
      issuer: 'https://mcp7.example/',
      scope: undefined,
      send: 'https://mcp7.example/',
    })
  })
})

describe('covers (RFC 9728 §3.3, as the MCP SDK reads it)', () => {
  it('is the very resource or a same-origin path prefix at a segment boundary', () => {
    const r = 'https://h.example/api/mcp'
    expect(covers(r, r)).toBe(true)
    for (const named of ['https://h.example/', 'https://h.example', 'https://h.example/api', 'https://h.example/api/'])
      expect(covers(named, r), named).toBe(true)
    for (const named of [
      'https://h.example/ap',
      'https://h.example/api/mcp/x',
      'https://other.example/',
      'http://h.example/',
      'https://h.example/?q=1',
      42,
      'not a url',
    ])
      expect(covers(named, r), String(named)).toBe(false)
  })
})
