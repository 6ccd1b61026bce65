import { describe, expect, it } from 'vitest'
import { mockUpstream, parseArgs } from './mock-upstream.js'

describe("Kong's mock upstream, in process", () => {
  it('echoes the request in the mock-upstream JSON shape, marked X-Powered-By: mock_upstream', () => {
    const answer = mockUpstream(
      {
        method: 'POST',
        path: '/request/x',
        query: 'a=1&a=2&flag',
        headers: { Host: '127.0.0.1:15555', 'Content-Type': 'application/x-www-form-urlencoded' },
        body: 'who=me',
      },
      '10.0.0.1',
    )
    expect(answer.status).toBe(200)
    expect(answer.headers['X-Powered-By']).toBe('mock_upstream')
    expect(JSON.parse(answer.body)).toMatchObject({
      headers: { host: '127.0.0.1:15555', 'content-type': 'application/x-www-form-urlencoded' },
      uri: '/request/x',
      url: 'http://127.0.0.1:15555/request/x?a=1&a=2&flag',
      uri_args: { a: ['1', '2'], flag: true },
      post_data: { text: 'who=me', kind: 'form', params: { who: 'me' } },
      vars: { request_uri: '/request/x?a=1&a=2&flag', remote_addr: '10.0.0.1', request_method: 'POST' },
    })
  })

  it('answers /status/:code with that status, /response-headers with its query as headers, /post only to POST', () => {
    const base = { method: 'GET', query: '', headers: {}, body: '' }
    const teapot = mockUpstream({ ...base, path: '/status/418' }, '10.0.0.9')
    expect(teapot.status).toBe(418)
    // the echo with the code, as Kong's mock upstream merges them
    expect(JSON.parse(String(teapot.body))).toMatchObject({
      code: 418,
      uri: '/status/418',
      vars: { remote_addr: '10.0.0.9' },
    })
    const rh = mockUpstream({ ...base, path: '/response-headers', query: 'X-A=b' }, '')
    expect(rh.headers['X-A']).toBe('b')
    expect(JSON.parse(String(rh.body))).toMatchObject({ uri_args: { 'X-A': 'b' } })
    // /cache/:n: the echo, cacheable for n seconds (proxy-cache's specs)
    const cached = mockUpstream({ ...base, path: '/cache/2' }, '')
    expect([cached.status, cached.headers['Cache-Control']]).toEqual([200, 'public, max-age=2'])
    expect(JSON.parse(String(cached.body))).toMatchObject({ uri: '/cache/2' })
    // a path the mock upstream has no location for is its 404, with the echo
    const missing = mockUpstream({ ...base, path: '/nowhere' }, '')
    expect(missing.status).toBe(404)
    expect(JSON.parse(String(missing.body))).toMatchObject({ uri: '/nowhere' })
    expect(mockUpstream({ ...base, path: '/post' }, '').status).toBe(405)
    // uri is nginx's $uri, decoded
    expect(JSON.parse(String(mockUpstream({ ...base, path: '/anything/a%20b/' }, '').body)).uri).toBe('/anything/a b/')
  })

  it("answers /timestamp with no body and its clock's seconds in Server-Time", () => {
    const answer = mockUpstream(
      { method: 'GET', path: '/timestamp', query: '', headers: {}, body: '' },
      '1.1.1.1',
      1_500,
    )
    expect([answer.status, answer.headers['Server-Time'], answer.body]).toEqual([200, '1.5', ''])
  })

  it('parses a JSON body into post_data.params', () => {
    const answer = mockUpstream(
      {
        method: 'POST',
        path: '/anything',
        query: '',
        headers: { 'content-type': 'application/json' },
        body: '{"n":1}',
      },
      '',
    )
    expect(JSON.parse(answer.body).post_data).toEqual({ text: '{"n":1}', kind: 'json', params: { n: 1 } })
  })

  it("reports a body its Content-Type cannot read as '<kind> (error)', and no type as unknown", () => {
    const post = (type: string | undefined, body: string) =>
      JSON.parse(
        mockUpstream(
          { method: 'POST', path: '/anything', query: '', headers: type ? { 'content-type': type } : {}, body },
          '',
        ).body,
      ).post_data
    expect(post('application/json', '{bad')).toMatchObject({ kind: 'json (error)', params: null })
    expect(post('application/json', '')).toMatchObject({ kind: 'json (error)', text: '' })
    expect(post(undefined, 'x')).toEqual({ text: 'x', kind: 'unknown', params: null })
  })

  it('decodes uri args with + and percent escapes', () => {
    expect(parseArgs('q=a+b%21&e=')).toEqual({ q: 'a b!', e: '' })
  })
})
