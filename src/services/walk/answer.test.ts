import { describe, expect, it } from 'vitest'
import { answerLines, showAnswer, shortenText } from './answer.js'

const JWT = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ1c2VyIn0.c2lnbmF0dXJlLXNpZ25hdHVyZQ'

describe('the answer that ends a walk', () => {
  it('parses a JSON body and shortens tokens at any depth, keeping an error code whole', () => {
    const shown = showAnswer({
      status: 200,
      contentType: 'application/json; charset=utf-8',
      body: JSON.stringify({
        access_token: 'opaque-access-token-0123456789',
        token_type: 'Bearer',
        expires_in: 3600,
        nested: { refresh_token: 'r-0123456789abcdef', note: `id ${JWT}` },
        code: 'FLOW_STARTED',
      }),
    })
    expect(shown).toEqual({
      status: 200,
      status_text: 'OK',
      content_type: 'application/json; charset=utf-8',
      body: {
        access_token: 'opaq…6789',
        token_type: 'Bearer',
        expires_in: 3600,
        nested: { refresh_token: 'r-01…cdef', note: 'id eyJh…VyZQ' },
        code: 'FLOW_STARTED',
      },
    })
  })

  it('pretty-prints JSON under a status line', () => {
    const lines = answerLines(
      showAnswer({ status: 409, statusText: 'Conflict', contentType: 'application/json', body: '{"code":"X"}' }),
    )
    expect(lines).toEqual(['answer 409 Conflict (application/json)', '{', '  "code": "X"', '}'])
  })

  it('keeps a text body as text, credentials in it shortened, at most 40 lines', () => {
    const body = [`token=${JWT}`, 'next?code=SplxlOBeZQQYbYS6WxSbIA&state=s', ...Array(50).fill('line')].join('\n')
    const shown = showAnswer({ status: 502, contentType: 'text/plain', body })
    const text = shown.body as string
    expect(text).not.toContain(JWT)
    expect(text).toContain('code=Splx…SbIA&state=s')
    expect(text.split('\n')).toHaveLength(41)
    expect(text.split('\n').at(-1)).toBe('… (12 more lines)')
    expect(shown.status_text).toBe('Bad Gateway')
  })

  it('shortens a JWT anywhere in text', () => {
    expect(shortenText(`Bearer ${JWT}.`)).toBe('Bearer eyJh…VyZQ.')
  })
})
