import { describe, expect, it } from 'vitest'
import { REDACTED, isSecretName, redact, redactDeep, safeText, scrubText } from './redact.js'

describe('redact', () => {
  it('replaces secrets at any depth and in arrays, by name in any case and spelling', () => {
    const out = redact({
      client_id: 'id',
      Client_Secret: 's1',
      authorize_params: { prompt: 'consent', nested: { 'X-Api-Key': 's2', list: [{ password: 's3' }, 'plain'] } },
      code_verifier: 's4',
      private_key: 's5',
      assertion: 's6',
      refresh_token: 's7',
    })
    expect(JSON.stringify(out)).not.toMatch(/"s\d"/)
    expect(out).toMatchObject({ client_id: 'id', authorize_params: { prompt: 'consent' } })
    expect((out.authorize_params as { nested: { list: unknown[] } }).nested.list[1]).toBe('plain')
  })

  it("redacts a plugin's own secret fields and keeps a __proto__ key as data", () => {
    const input = JSON.parse('{"pin":"1234","__proto__":{"polluted":true}}') as Record<string, unknown>
    const out = redact(input, ['pin'])
    expect(out.pin).toBe(REDACTED)
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype)
    expect(({} as { polluted?: boolean }).polluted).toBeUndefined()
  })

  it('names secrets by one list', () => {
    for (const name of [
      'client_secret',
      'consumer_secret',
      'access_token',
      'oauth_token_secret',
      'password',
      'api_key',
      'apiKey',
      'code',
    ])
      expect(isSecretName(name), name).toBe(true)
    for (const name of [
      'client_id',
      'scope',
      'state',
      'consumer_key',
      'authorize_url',
      'codec',
      'token_type',
      'Token_Type',
    ])
      expect(isSecretName(name), name).toBe(false)
  })
})

describe('redactDeep for log lines', () => {
  it('keeps an error readable (type, message, stack) with the URL credentials in its text scrubbed', () => {
    const err = Object.assign(new Error('fetch https://u:PASS@id.example/token?client_secret=PASS failed'), {
      code: 'E1',
      password: 'PASS',
    })
    const out = redactDeep({ err, nested: [{ access_token: 'PASS' }] }) as { err: Record<string, unknown> }
    expect(out.err).toMatchObject({ type: 'Error', code: 'E1', password: REDACTED })
    expect(out.err.message).toBe(`fetch https://${REDACTED}@id.example/token?client_secret=${REDACTED} failed`)
    expect(String(out.err.stack)).toContain('redact.test')
    expect(JSON.stringify(out)).not.toContain('PASS')
  })
})

describe('scrubText and safeText', () => {
  it('scrubs URL userinfo, secret query parameters and JSON fields', () => {
    expect(
      scrubText('https://user:PASS@host/x?client_secret=PASS&scope=a b=1 password=PASS {"access_token":"PASS"}'),
    ).toBe(
      `https://${REDACTED}@host/x?client_secret=${REDACTED}&scope=a b=1 password=${REDACTED} {"access_token":"${REDACTED}"}`,
    )
  })

  it('makes one short line without control characters', () => {
    const text = safeText(`bad\r\n\u0007\u001b[31m${'x'.repeat(1000)}`)
    // eslint-disable-next-line no-control-regex -- looking for control characters
    expect(text).not.toMatch(/[\r\n\u0007\u001b]/)
    expect(text.length).toBeLessThanOrEqual(300)
  })
})
