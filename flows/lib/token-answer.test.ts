import { describe, expect, it } from 'vitest'
import { FlowError } from '../contract.js'
import { deliverable, tokenFromAnswer, valueAt } from './token-answer.js'

const answer = (status: number, body: unknown, headers: Record<string, string> = {}) => ({
  status,
  headers: { 'content-type': 'application/json', ...headers },
  body: typeof body === 'string' ? body : JSON.stringify(body),
})

/** The FlowError tokenFromAnswer throws for `a`. */
function thrown(a: ReturnType<typeof answer>): FlowError {
  try {
    tokenFromAnswer(a)
  } catch (err) {
    if (err instanceof FlowError) return err
    throw err
  }
  throw new Error('no error thrown')
}

describe('tokenFromAnswer: provider error shapes', () => {
  it.each([
    ['RFC 6749', 400, { error: 'invalid_grant', error_description: 'Code expired' }, 'invalid_grant', 'Code expired'],
    [
      'Slack ok:false',
      200,
      { ok: false, error: 'invalid_code' },
      'invalid_code',
      'The token endpoint answered 200 with invalid_code',
    ],
    [
      'Facebook nested',
      400,
      { error: { message: 'Bad code', type: 'OAuthException', code: 100 } },
      'OAuthException',
      'Bad code',
    ],
    [
      'Notion object:error',
      400,
      { object: 'error', status: 400, code: 'invalid_grant', message: 'Invalid code: this code has been revoked.' },
      'invalid_grant',
      'Invalid code: this code has been revoked.',
    ],
    [
      'errors list',
      401,
      { errors: [{ category: 'AUTHENTICATION_ERROR', code: 'UNAUTHORIZED', detail: 'Bad client' }] },
      'UNAUTHORIZED',
      'Bad client',
    ],
    ['errors of strings', 400, { errors: ['redirect_uri mismatch'] }, 'server_error', 'redirect_uri mismatch'],
    ['ok:false alone', 200, { ok: false }, 'server_error', 'The token endpoint answered 200 with an error'],
    ['bare message', 403, { message: 'Bad credentials' }, 'server_error', 'Bad credentials'],
  ])('%s reaches the app with the code and message', (_name, status, body, code, message) => {
    const err = thrown(answer(status, body))
    expect(err.oauthError).toBe(code)
    expect(err.brokerCode).toBe('PROVIDER_ERROR')
    expect(err.description).toBe(message)
  })

  it("keeps a provider's code as the app's error only: one that reads like the broker's is never the broker's code", () => {
    for (const code of ['UNAUTHORIZED', 'STORE_UNAVAILABLE', 'INTERNAL', 'VALIDATION']) {
      const err = thrown(answer(401, { errors: [{ code }] }))
      expect(err).toMatchObject({ oauthError: code, brokerCode: 'PROVIDER_ERROR' })
    }
    expect(thrown(answer(401, { errors: ['no code'] }))).toMatchObject({
      oauthError: 'server_error',
      brokerCode: 'PROVIDER_ERROR',
    })
  })

  it('keeps a prose "error" as the message under PROVIDER_ERROR', () => {
    const err = thrown(answer(400, { error: 'Something went wrong with your request' }))
    expect(err.oauthError).toBe('server_error')
    expect(err.brokerCode).toBe('PROVIDER_ERROR')
    expect(err.description).toBe('Something went wrong with your request')
  })

  it('says a 3xx redirected, naming where without the query', () => {
    const err = thrown(answer(302, '', { location: 'https://login.example/sso?secret=1', 'content-type': 'text/html' }))
    expect(err).toMatchObject({ oauthError: 'server_error', brokerCode: 'PROVIDER_ERROR' })
    expect(err.description).toBe(
      'The token endpoint redirected (HTTP 302 to https://login.example/sso) instead of answering; check access_url',
    )
    expect(thrown(answer(307, '{"access_token":"a"}')).description).toMatch(
      /^The token endpoint redirected \(HTTP 307\)/,
    )
  })
})

describe('tokenFromAnswer: access_name', () => {
  const slack = {
    ok: true,
    app_id: 'A1',
    authed_user: { id: 'U1', scope: 'chat:write', access_token: 'xoxp-user', token_type: 'user' },
    team: { id: 'T1', name: 'Team' },
  }

  it('follows a dotted path (Slack user tokens)', () => {
    const t = tokenFromAnswer(answer(200, slack), 'authed_user.access_token')
    expect(t.access_token).toBe('xoxp-user')
    expect(t.team).toEqual({ id: 'T1', name: 'Team' })
  })

  it('prefers a top-level field whose name has a dot, and names a missing path', () => {
    expect(valueAt({ 'a.b': 1, a: { b: 2 } }, 'a.b')).toBe(1)
    expect(valueAt({ a: { b: 2 } }, 'a.b')).toBe(2)
    expect(valueAt({ a: 'x' }, 'a.length')).toBeUndefined()
    expect(() => tokenFromAnswer(answer(200, slack), 'authed_user.token')).toThrow(
      'The token endpoint\'s answer has no "authed_user.token"',
    )
  })
})

describe('deliverable', () => {
  const record = { auth_type: 'oauth', state: 'app-state' }

  it('delivers every field of the token answer, objects as they are', () => {
    const token = {
      access_token: 'a',
      expires_in: 3599,
      ext_expires_in: 3599,
      instance_url: 'https://eu1.my.salesforce.com',
      authed_user: { id: 'U1' },
      scopes: ['a', 'b'],
      nothing: null,
    }
    expect(deliverable(token, record)).toEqual({
      access_token: 'a',
      expires_in: 3599,
      ext_expires_in: 3599,
      instance_url: 'https://eu1.my.salesforce.com',
      authed_user: { id: 'U1' },
      scopes: ['a', 'b'],
      state: 'app-state',
    })
  })

  it('adds the authorization response but code, state and iss; the token answer wins', () => {
    const out = deliverable({ access_token: 'a', realmId: 'from-token' }, record, {
      code: 'c',
      state: 'broker-state',
      iss: 'https://issuer',
      realmId: '123',
      user: '{"name":{"firstName":"A"}}',
      locale: 'de',
    })
    expect(out).toEqual({
      access_token: 'a',
      realmId: 'from-token',
      user: '{"name":{"firstName":"A"}}',
      locale: 'de',
      state: 'app-state',
    })
  })

  it('never takes a standard token field from the front channel', () => {
    const out = deliverable({ access_token: 'a' }, record, {
      access_token: 'x',
      id_token: 'forged',
      refresh_token: 'r',
      scope: 'admin',
    })
    expect(out).toEqual({ access_token: 'a', state: 'app-state' })
  })

  it("never lets a provider field pass for the broker's own parameters", () => {
    const spoof = {
      state: 'other',
      error: 'access_denied',
      error_description: 'x',
      error_uri: 'https://x',
      broker_error: 'FAILED',
      result: 'code',
      id_token_verified: 'true',
    }
    const out = deliverable({ access_token: 'a', ...spoof }, { auth_type: 'oauth' }, { ...spoof, realmId: '1' })
    expect(out).toEqual({ access_token: 'a', realmId: '1' })
    expect(Object.getPrototypeOf(deliverable(JSON.parse('{"access_token":"a","__proto__":{"x":1}}'), record))).toBe(
      Object.prototype,
    )
  })

  it('fills token_type from authorize_method only when the provider gives none', () => {
    const r = { auth_type: 'oauth', authorize_method: 'OAuth' }
    expect(deliverable({ access_token: 'a' }, r).token_type).toBe('OAuth')
    expect(deliverable({ access_token: 'a', token_type: 'bearer' }, r).token_type).toBe('bearer')
  })
})
