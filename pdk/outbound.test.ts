import { describe, expect, it } from 'vitest'
import type { OutboundEntry } from './fixture-types.generated.js'
import { answerOf, checkOutbound, requestFailures, type SentRequest, unmatchedMessage } from './outbound.js'

const sent = (over: Partial<SentRequest> = {}): SentRequest => ({
  method: 'POST',
  url: 'https://auth.example/introspect',
  headers: { 'Content-Type': 'application/x-www-form-urlencoded', Host: 'auth.example' },
  body: 'token=abc',
  ...over,
})

describe('an outbound entry answering a request', () => {
  it('answers with the first entry that matches, in order', () => {
    const entries: OutboundEntry[] = [
      { request: { url: 'https://other.example/' }, response: { status: 500 } },
      { request: { url: { $match: '/introspect$' } }, response: { status: 200, body: 'first' } },
      { request: { url: 'https://auth.example/introspect' }, response: { status: 201, body: 'second' } },
    ]
    expect(answerOf(entries, sent())).toMatchObject({ status: 200, body: 'first' })
  })

  it('matches the method, a subset of the headers in any case, and the body, with matchers', () => {
    const ok = (request: OutboundEntry['request']) => answerOf([{ request, response: { status: 204 } }], sent())
    expect(ok({ url: 'https://auth.example/introspect', method: 'POST' })).toMatchObject({ status: 204 })
    expect(ok({ url: 'https://auth.example/introspect', method: 'GET' })).toBeUndefined()
    expect(
      ok({ url: 'https://auth.example/introspect', headers: { 'content-type': { $contains: 'form' } } }),
    ).toMatchObject({ status: 204 })
    expect(ok({ url: 'https://auth.example/introspect', headers: { authorization: null } })).toMatchObject({
      status: 204,
    })
    expect(ok({ url: 'https://auth.example/introspect', headers: { authorization: 'Basic x' } })).toBeUndefined()
    expect(ok({ url: 'https://auth.example/introspect', body: 'token=abc' })).toMatchObject({ status: 204 })
    expect(ok({ url: 'https://auth.example/introspect', body: 'token=other' })).toBeUndefined()
    expect(ok({ url: 'https://auth.example/introspect?x=1' })).toBeUndefined()
  })

  it('compares a JSON body as JSON', () => {
    const body = '{"b":2,"a":1}'
    const entry: OutboundEntry = {
      request: { url: 'https://auth.example/introspect', body: { a: 1, b: 2 } },
      response: { status: 200 },
    }
    expect(answerOf([entry], sent({ body }))).toMatchObject({ status: 200 })
    expect(answerOf([entry], sent({ body: '{"a":1}' }))).toBeUndefined()
  })

  it('sends a JSON body as JSON text, with its Content-Type unless one is given, and the reason of the status', () => {
    const url = 'https://auth.example/introspect'
    expect(answerOf([{ request: { url }, response: { status: 200, body: { active: true } } }], sent())).toEqual({
      status: 200,
      reason: 'OK',
      headers: { 'Content-Type': 'application/json' },
      body: '{"active":true}',
    })
    const given = answerOf(
      [{ request: { url }, response: { status: 404, headers: { 'content-type': 'text/json', 'x-n': 1 }, body: [] } }],
      sent(),
    )
    expect(given).toEqual({
      status: 404,
      reason: 'Not Found',
      headers: { 'content-type': 'text/json', 'x-n': '1' },
      body: '[]',
    })
  })

  it("answers an entry's error as the error", () => {
    const entries: OutboundEntry[] = [
      { request: { url: 'https://auth.example/introspect' }, response: { error: 'timeout' } },
    ]
    expect(answerOf(entries, sent())).toEqual({ error: 'timeout' })
  })

  it('says which call matched nothing, and the entry that would answer it', () => {
    expect(unmatchedMessage('resty.http.request_uri', sent())).toBe(
      'resty.http.request_uri(POST https://auth.example/introspect) matches no entry of "outbound": add one that answers it, e.g. {"request":{"method":"POST","url":"https://auth.example/introspect"},"response":{"status":200,"body":"…"}}',
    )
  })
})

describe('expect.outbound', () => {
  it('holds when the requests made match, in order, all of them', () => {
    const two = [sent(), sent({ method: 'GET', url: 'https://auth.example/jwks', body: '' })]
    expect(
      checkOutbound([{ url: { $match: 'introspect' } }, { method: 'GET', url: 'https://auth.example/jwks' }], two),
    ).toEqual([])
  })

  it('names the field that differs, a request missing, and one more than stated', () => {
    const one = [sent()]
    expect(checkOutbound([{ method: 'GET', url: 'https://auth.example/introspect' }], one)).toEqual([
      { path: '$.expect.outbound[0].method', expected: 'GET', actual: 'POST' },
    ])
    expect(checkOutbound([{ url: 'https://auth.example/introspect' }, { url: 'x' }], one)).toEqual([
      { path: '$.expect.outbound[1]', expected: { url: 'x' }, actual: null },
    ])
    expect(checkOutbound([], one)).toEqual([{ path: '$.expect.outbound[0]', expected: null, actual: one[0] }])
  })

  it('reports each failure of a request under its path', () => {
    expect(requestFailures({ url: 'u', headers: { host: 'h' } }, sent(), '$.x')).toEqual([
      { path: '$.x.url', expected: 'u', actual: 'https://auth.example/introspect' },
      { path: '$.x.headers.host', expected: 'h', actual: 'auth.example' },
    ])
  })
})
