import { describe, expect, it } from 'vitest'
import { FlowError } from '../contract.js'
import { extraParams, pkcePair, tokenFromAnswer, wantsPkce } from './oauth2.js'
import { createHash } from 'node:crypto'

const answer = (status: number, body: string, type = 'application/json') => ({
  status,
  headers: { 'content-type': type },
  body,
})

describe('tokenFromAnswer', () => {
  it('reads a JSON token answer', () => {
    expect(tokenFromAnswer(answer(200, '{"access_token":"a","expires_in":3600}'))).toMatchObject({
      access_token: 'a',
      expires_in: 3600,
    })
  })

  it('reads a form-encoded answer (GitHub without Accept) and numbers expires_in', () => {
    const t = tokenFromAnswer(
      answer(
        200,
        'access_token=gho_1&scope=repo&token_type=bearer&expires_in=28800',
        'application/x-www-form-urlencoded; charset=utf-8',
      ),
    )
    expect(t).toMatchObject({ access_token: 'gho_1', scope: 'repo', token_type: 'bearer', expires_in: 28800 })
  })

  it('raises a provider error sent with status 200', () => {
    const err = (() => {
      try {
        tokenFromAnswer(
          answer(
            200,
            'error=bad_verification_code&error_description=The+code+is+wrong',
            'application/x-www-form-urlencoded',
          ),
        )
      } catch (e) {
        return e as FlowError
      }
    })()
    expect(err).toBeInstanceOf(FlowError)
    expect(err).toMatchObject({ oauthError: 'bad_verification_code', brokerCode: 'PROVIDER_ERROR' })
    expect(err?.description).toBe('The code is wrong')
  })

  it("passes on a nested provider error's message (Facebook's Graph API)", () => {
    const fb =
      '{"error":{"message":"Invalid verification code format.","type":"OAuthException","code":100,"fbtrace_id":"A1"}}'
    expect(() => tokenFromAnswer(answer(400, fb))).toThrow(
      expect.objectContaining({ oauthError: 'OAuthException', description: 'Invalid verification code format.' }),
    )
    expect(() => tokenFromAnswer(answer(200, '{"error":{"code":190}}'))).toThrow(
      expect.objectContaining({
        oauthError: 'server_error',
        brokerCode: 'PROVIDER_ERROR',
        description: 'The token endpoint answered 200 with an error (code 190)',
      }),
    )
  })

  it('refuses HTML and truncated JSON with a clear message', () => {
    expect(() => tokenFromAnswer(answer(200, '<html>oops</html>', 'text/html'))).toThrow(
      /neither JSON nor form-encoded/,
    )
    expect(() => tokenFromAnswer(answer(200, '{"access_token":"a'))).toThrow(/neither JSON/)
    expect(() => tokenFromAnswer(answer(500, '{}'))).toThrow(/answered 500/)
  })

  it('honours access_name', () => {
    expect(tokenFromAnswer(answer(200, '{"token":"t1"}'), 'token').access_token).toBe('t1')
  })
})

describe('oauth2 helpers', () => {
  it('makes an S256 PKCE pair', () => {
    const { verifier, challenge } = pkcePair()
    expect(verifier).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(challenge).toBe(createHash('sha256').update(verifier).digest('base64url'))
  })

  it('turns PKCE off only when asked', () => {
    expect(wantsPkce({ auth_type: 'oauth' })).toBe(true)
    for (const v of [false, 'false', '0', 'no']) expect(wantsPkce({ auth_type: 'oauth', pkce: v })).toBe(false)
  })

  it('reads extra authorize params as an object or a query string', () => {
    expect(extraParams('prompt=consent&access_type=offline')).toEqual({ prompt: 'consent', access_type: 'offline' })
    expect(extraParams({ a: 1 })).toEqual({ a: '1' })
  })
})
