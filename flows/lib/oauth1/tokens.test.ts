import { describe, expect, it } from 'vitest'
import { FlowError } from '../../contract.js'
import { accessResult, credentialsFromAnswer, formFields } from './tokens.js'

const answer = (status: number, body: string, type = 'application/x-www-form-urlencoded') => ({
  status,
  headers: { 'content-type': type },
  body,
})

const refusal = (status: number, body: string, type?: string): FlowError => {
  try {
    credentialsFromAnswer(answer(status, body, type), 'request token')
  } catch (err) {
    return err as FlowError
  }
  throw new Error('no refusal')
}

describe('credentialsFromAnswer', () => {
  it('reads token, secret and extra fields from a form body sent as text/html', () => {
    const c = credentialsFromAnswer(
      answer(200, 'oauth_token=t&oauth_token_secret=s%2Bx&user_id=1', 'text/html; charset=utf-8'),
      'access token',
    )
    expect(c).toEqual({
      token: 't',
      secret: 's+x',
      fields: { oauth_token: 't', oauth_token_secret: 's+x', user_id: '1' },
    })
  })

  it('accepts an empty token secret (RFC 5849 allows it)', () => {
    expect(credentialsFromAnswer(answer(200, 'oauth_token=t&oauth_token_secret='), 'x').secret).toBe('')
  })

  it('turns an OAuth problem report into the error code and advice', () => {
    const err = refusal(401, 'oauth_problem=timestamp_refused&oauth_problem_advice=Clock+skew')
    expect(err).toBeInstanceOf(FlowError)
    expect(err).toMatchObject({ oauthError: 'timestamp_refused', brokerCode: 'PROVIDER_ERROR' })
    expect(err.description).toBe('The request token endpoint refused the request (401 timestamp_refused): Clock skew')
  })

  it('quotes a plain refusal, tags stripped and cut short', () => {
    const err = refusal(403, `<html><body><p>Forbidden:  ${'x'.repeat(300)}</p></body></html>`, 'text/html')
    expect(err).toMatchObject({ oauthError: 'server_error', brokerCode: 'PROVIDER_ERROR' })
    expect(err.description).toMatch(/^The request token endpoint answered 403: Forbidden: x+$/)
    expect(err.description.length).toBeLessThan(260)
  })

  it('refuses a 2xx body that is not form-encoded', () => {
    expect(refusal(200, '{"oauth_token":"t"}', 'application/json').description).toMatch(
      /not form-encoded: \{"oauth_token":"t"\}/,
    )
    expect(refusal(200, '').description).toMatch(/not form-encoded: \(empty\)/)
  })

  it('names what a form answer lacks', () => {
    expect(refusal(200, 'oauth_token_secret=s').description).toBe(
      "The request token endpoint's answer has no oauth_token",
    )
    expect(refusal(200, 'a=b').description).toBe(
      "The request token endpoint's answer has no oauth_token and oauth_token_secret",
    )
  })

  it('refuses redirects like any other non-2xx', () => {
    expect(refusal(302, '').description).toBe('The request token endpoint answered 302')
  })
})

describe('formFields', () => {
  it('takes forms and leaves prose, HTML and JSON', () => {
    expect(formFields(' a=1&b=%20 \n')).toEqual({ a: '1', b: ' ' })
    expect(formFields('Invalid signature')).toBeUndefined()
    expect(formFields('<p>a=1</p>')).toBeUndefined()
    expect(formFields('{"a":1}')).toBeUndefined()
  })
})

describe('accessResult', () => {
  it('delivers access_token, access_secret, the extra fields and the app state, not the protocol fields', () => {
    const out = accessResult(
      {
        token: 't',
        secret: 's',
        fields: {
          oauth_token: 't',
          oauth_token_secret: 's',
          oauth_callback_confirmed: 'true',
          screen_name: 'al',
          state: 'x',
        },
      },
      { auth_type: 'oauth', state: 'mine' },
    )
    expect(out).toEqual({ access_token: 't', access_secret: 's', screen_name: 'al', state: 'mine' })
  })
})
