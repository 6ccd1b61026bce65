import { generateKeyPairSync, hash } from 'node:crypto'
import { decodeJwt, decodeProtectedHeader } from 'jose'
import { describe, expect, it } from 'vitest'
import type { FlowContext, HttpAnswer, HttpRequest } from '../contract.js'
import passwordFlow from '../oauth_owner_resources_2.js'
import { flowDpop } from './dpop/index.js'
import type { Endpoints } from './oidc/index.js'
import { fetchProfile } from './profile.js'

const endpoints = (userinfo: string): Endpoints => ({ userinfo, usePar: false, issAlways: false })

/** A step context whose `http` answers from `answers` in turn and keeps what it was sent. */
function context(answers: HttpAnswer[]): { ctx: Pick<FlowContext, 'record' | 'http'>; sent: HttpRequest[] } {
  const sent: HttpRequest[] = []
  const ctx = {
    record: { auth_type: 'oauth', client_id: 'app' },
    http: async (_url: string, request: HttpRequest = {}) => {
      sent.push(request)
      return answers.shift()!
    },
  }
  return { ctx, sent }
}

const json = (body: unknown): HttpAnswer => ({
  status: 200,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
})

const key = async () => {
  const jwk = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' })
  return (await flowDpop({ auth_type: 'oauth', dpop_key: jwk }, {}))!.key
}

describe('fetchProfile with a DPoP-bound token (RFC 9449 §7)', () => {
  it('sends the DPoP scheme and a proof with ath; a use_dpop_nonce is answered by one retry with its nonce', async () => {
    const url = 'https://rs-nonce.example/userinfo?x=1'
    const { ctx, sent } = context([
      {
        status: 401,
        headers: { 'www-authenticate': 'DPoP error="use_dpop_nonce"', 'dpop-nonce': 'rs-nonce-1' },
        body: '',
      },
      json({ sub: 'alice' }),
    ])
    const profile = await fetchProfile(ctx, { access_token: 'tok-1', token_type: 'DPoP' }, endpoints(url), await key())
    expect(profile).toEqual({ sub: 'alice' })
    expect(sent).toHaveLength(2)
    for (const request of sent) {
      expect(request.method).toBe('GET')
      expect(request.headers!.authorization).toBe('DPoP tok-1')
      expect(decodeProtectedHeader(request.headers!.dpop!)).toMatchObject({ typ: 'dpop+jwt', alg: 'ES256' })
      expect(decodeJwt(request.headers!.dpop!)).toMatchObject({
        htm: 'GET',
        htu: 'https://rs-nonce.example/userinfo',
        ath: hash('sha256', 'tok-1', 'base64url'),
      })
    }
    expect(decodeJwt(sent[0]!.headers!.dpop!).nonce).toBeUndefined()
    expect(decodeJwt(sent[1]!.headers!.dpop!).nonce).toBe('rs-nonce-1')
  })

  it('retries once only: a second use_dpop_nonce is the answer', async () => {
    const refusal: HttpAnswer = {
      status: 401,
      headers: { 'www-authenticate': 'DPoP error="use_dpop_nonce"', 'dpop-nonce': 'again' },
      body: '',
    }
    const { ctx, sent } = context([refusal, { ...refusal }])
    await expect(
      fetchProfile(
        ctx,
        { access_token: 'tok', token_type: 'DPoP' },
        endpoints('https://rs-twice.example/me'),
        await key(),
      ),
    ).rejects.toThrow(/answered 401/)
    expect(sent).toHaveLength(2)
  })

  it('sends a Bearer token as Bearer, without a proof, even when the flow has a key', async () => {
    const { ctx, sent } = context([json({ sub: 'alice' })])
    await fetchProfile(
      ctx,
      { access_token: 'tok', token_type: 'Bearer' },
      endpoints('https://rs-bearer.example/me'),
      await key(),
    )
    expect(sent[0]!.headers).toEqual({ authorization: 'Bearer tok', accept: 'application/json, application/jwt' })
  })
})

describe('the password flow (oauth_owner_resources_2)', () => {
  it("delivers the user's profile with profile: true, from profile_url with the token", async () => {
    const sent: { url: string; request?: HttpRequest }[] = []
    const answers = [json({ access_token: 'tok-1', token_type: 'Bearer' }), json({ sub: 'alice', name: 'Alice' })]
    const ctx: FlowContext = {
      record: {
        auth_type: 'oauth',
        auth_flow: 'owner_resources',
        auth_version: '2',
        client_id: 'c',
        access_url: 'https://as.example/token',
        username: 'alice',
        password: 'pw',
        profile: true,
        profile_url: 'https://as.example/me',
      },
      data: {},
      callbackUrl: 'http://localhost:3000/callback',
      state: 'st',
      params: {},
      allowed: () => true,
      http: async (url, request) => {
        sent.push({ url, request })
        return answers.shift()!
      },
    }
    const step = await passwordFlow.start!(ctx)
    expect(step).toMatchObject({ deliver: { access_token: 'tok-1', profile: { sub: 'alice', name: 'Alice' } } })
    expect(sent.map((s) => s.url)).toEqual(['https://as.example/token', 'https://as.example/me'])
    expect(sent[1]!.request!.headers!.authorization).toBe('Bearer tok-1')
  })
})
