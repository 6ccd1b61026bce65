import { describe, expect, it } from 'vitest'
import { kitFor } from '../../runner/harness.js'
import { toList } from '../private/values.js'

describe('request getters', () => {
  it('reads method, scheme, host, port, path and query as sent', () => {
    const { kit } = kitFor({ request: { method: 'post', url: 'https://Example.COM:8443/a//b/../c?x=1&y' } })
    expect(kit.request.get_method()).toBe('POST')
    expect(kit.request.get_scheme()).toBe('https')
    expect(kit.request.get_host()).toBe('example.com')
    expect(kit.request.get_port()).toBe(8443)
    expect(kit.request.get_raw_path()).toBe('/a//b/../c')
    expect(kit.request.get_path()).toBe('/a/c')
    expect(kit.request.get_path_with_query()).toBe('/a//b/../c?x=1&y')
    expect(kit.request.get_raw_query()).toBe('x=1&y')
    expect(kit.request.get_query()).toEqual({ x: '1', y: true })
  })

  it("reads the query as Kong's $args: a query set for the service is what later calls see", () => {
    const { kit } = kitFor({ request: { url: 'http://h/p?a=0&debug' } })
    kit.service.request.set_raw_query('a=1&b=2')
    expect(kit.request.get_raw_query()).toBe('a=1&b=2')
    expect(kit.request.get_query()).toEqual({ a: '1', b: '2' })
    kit.service.request.clear_query_arg('a')
    expect(kit.request.get_query_arg('a')).toBeUndefined()
    expect(kit.request.get_path_with_query()).toBe('/p?a=0&debug')
  })

  it("clear_query_arg leaves the rest in order, unreserved characters decoded (Kong's search_remove)", () => {
    const { kit } = kitFor({ request: { url: 'http://h/r?c=valu%651&b=a%2Fb&api%6B%65%79=kong&a=x+y' } })
    kit.service.request.clear_query_arg('apikey')
    expect(kit.request.get_raw_query()).toBe('c=value1&b=a%2Fb&a=x%20y')
  })

  it('get_query_arg gives the first of repeated arguments', () => {
    const { kit } = kitFor({ request: { url: 'http://h/?a=1&a=2' } })
    expect(kit.request.get_query_arg('a')).toBe('1')
    expect(kit.request.get_query_arg('missing')).toBeUndefined()
  })

  it('get_query honours lua_max_uri_args and max_args', () => {
    const { kit } = kitFor({ request: { url: 'http://h/?a=1&b=2&c=3' }, config: { lua_max_uri_args: 2 } })
    expect(Object.keys(toList(kit.request.get_query())[0]!)).toEqual(['a', 'b'])
    expect(Object.keys(toList(kit.request.get_query(1))[0]!)).toEqual(['a'])
    expect(() => kit.request.get_query(1001)).toThrow('max_args must be <= 1000')
  })

  it('get_query and get_headers say "truncated" as a second value when max left some out, as Kong returns ngx\'s', () => {
    const { kit } = kitFor({ request: { url: 'http://h/?a=1&b=2', headers: { h1: 'v', h2: 'v' } } })
    expect(toList(kit.request.get_query(1))).toEqual([{ a: '1' }, 'truncated'])
    expect(toList(kit.request.get_query(2))).toEqual([{ a: '1', b: '2' }])
    expect(kit.request.get_query_arg('b')).toBe('2')
    const [headers, err] = toList(kit.request.get_headers(1))
    expect([Object.keys(headers as object).length, err]).toEqual([1, 'truncated'])
    expect(toList(kit.request.get_headers(100))).toHaveLength(1)
  })

  it('matches header names case-insensitively with _ for -', () => {
    const { kit } = kitFor({ request: { headers: { 'X-Custom-Header': ['one', 'two'] } } })
    expect(kit.request.get_header('x_custom_header')).toBe('one')
    expect((kit.request.get_headers() as Record<string, unknown>)['x-custom-header']).toEqual(['one', 'two'])
  })

  it('get_headers keeps at most max_headers entries', () => {
    const headers = Object.fromEntries(Array.from({ length: 5 }, (_, i) => [`h${i}`, 'v']))
    const { kit } = kitFor({ request: { headers } })
    expect(Object.keys(toList(kit.request.get_headers(2))[0]!)).toHaveLength(2)
    expect(() => kit.request.get_headers(0)).toThrow('max_headers must be >= 1')
  })

  it('get_http_version is nil when unrecognized', () => {
    expect(kitFor({ request: { http_version: 2 } }).kit.request.get_http_version()).toBe(2)
    expect(kitFor({ request: { http_version: null } }).kit.request.get_http_version()).toBeUndefined()
  })

  it("throws Kong's phase error outside its phases", () => {
    const { kit } = kitFor({}, 'init_worker')
    expect(() => kit.request.get_header('host')).toThrow(
      'function cannot be called in init_worker phase (only in: rewrite, access, balancer, response, cluster_listener, header_filter, body_filter, log, error, admin_api)',
    )
  })

  it('get_port also works in certificate, other getters do not', () => {
    const { kit } = kitFor({ request: { url: 'https://h/' } }, 'certificate')
    expect(kit.request.get_port()).toBe(443)
    expect(() => kit.request.get_host()).toThrow('cannot be called in certificate phase')
  })
})

describe('request bodies', () => {
  it('decodes form bodies, true for bare names', async () => {
    const { kit } = kitFor({
      request: {
        method: 'POST',
        body: 'a=1&a=2&b&c=',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      },
    })
    expect(toList(await kit.request.get_body())).toEqual([
      { a: ['1', '2'], b: true, c: '' },
      undefined,
      'application/x-www-form-urlencoded',
    ])
  })

  it('limits form arguments to lua_max_post_args', async () => {
    const { kit } = kitFor({
      config: { lua_max_post_args: 2 },
      request: {
        method: 'POST',
        body: 'a=1&b=2&c=3',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      },
    })
    const [body] = toList(await kit.request.get_body())
    expect(body).toEqual({ a: '1', b: '2' })
  })

  it('decodes JSON bodies and rejects invalid JSON', async () => {
    const ok = kitFor({ request: { method: 'POST', body: { n: 1 } } })
    expect(toList(await ok.kit.request.get_body())).toEqual([{ n: 1 }, undefined, 'application/json'])
    const bad = kitFor({ request: { method: 'POST', body: '{nope', headers: { 'content-type': 'application/json' } } })
    expect(toList(await bad.kit.request.get_body())).toEqual([undefined, 'invalid json body', 'application/json'])
  })

  it('decodes multipart bodies, files as their content', async () => {
    const body =
      '--XX\r\nContent-Disposition: form-data; name="a"\r\n\r\none\r\n--XX\r\nContent-Disposition: form-data; name="f"; filename="f.txt"\r\nContent-Type: text/plain\r\n\r\nfile text\r\n--XX--\r\n'
    const { kit } = kitFor({
      request: { method: 'POST', body, headers: { 'content-type': 'multipart/form-data; boundary=XX' } },
    })
    expect(toList(await kit.request.get_body())).toEqual([
      { a: 'one', f: 'file text' },
      undefined,
      'multipart/form-data',
    ])
  })

  it('fails to decode multipart without a boundary', async () => {
    const { kit } = kitFor({
      request: { method: 'POST', body: 'x', headers: { 'content-type': 'multipart/form-data' } },
    })
    expect(toList(await kit.request.get_body())).toEqual([
      undefined,
      'unable to decode multipart body',
      'multipart/form-data',
    ])
  })

  it('lets the mimetype argument win over the content type', async () => {
    const { kit } = kitFor({ request: { method: 'POST', body: 'a=1', headers: { 'content-type': 'text/plain' } } })
    expect(toList(await kit.request.get_body('application/x-www-form-urlencoded'))[0]).toEqual({ a: '1' })
  })

  it('reports a missing or unsupported content type', async () => {
    expect(toList(await kitFor({ request: { body: 'x' } }).kit.request.get_body())).toEqual([
      undefined,
      'missing content type',
    ])
    const { kit } = kitFor({ request: { body: 'x', headers: { 'content-type': 'text/plain' } } })
    expect(toList(await kit.request.get_body())).toEqual([
      undefined,
      "unsupported content type 'text/plain'",
      'text/plain',
    ])
  })

  it('get_raw_body gives an empty string for an empty body', () => {
    expect(kitFor().kit.request.get_raw_body()).toBe('')
  })

  it('get_raw_body fails past client_body_buffer_size unless max_allowed_file_size allows it', () => {
    const { kit } = kitFor({ config: { client_body_buffer_size: 4 }, request: { method: 'POST', body: '0123456789' } })
    expect(toList(kit.request.get_raw_body())).toEqual([
      undefined,
      "request body did not fit into client body buffer, consider raising 'client_body_buffer_size'",
    ])
    expect(kit.request.get_raw_body(0)).toBe('0123456789')
    expect(kit.request.get_raw_body(20)).toBe('0123456789')
    expect(toList(kit.request.get_raw_body(5))).toEqual([undefined, 'request body file too big: 10 > 5'])
  })

  it('reads bodies only in rewrite, access, response and admin_api', () => {
    const { kit } = kitFor({}, 'log')
    expect(() => kit.request.get_raw_body()).toThrow('(only in: rewrite, access, response, error, admin_api)')
  })
})

describe('forwarded getters', () => {
  const headers = {
    'X-Forwarded-Proto': 'HTTPS',
    'X-Forwarded-Host': 'user@Public.Example:8443',
    'X-Forwarded-Port': '444',
    'X-Forwarded-Path': '/outer/path',
    'X-Forwarded-Prefix': '/outer',
  }

  it('honour X-Forwarded-* from a trusted peer', () => {
    const { kit } = kitFor({
      config: { trusted_ips: ['10.0.0.0/8'] },
      request: { url: 'http://inner/p', headers, client: { ip: '10.1.2.3', port: 1000 } },
    })
    expect(kit.request.get_forwarded_scheme()).toBe('https')
    expect(kit.request.get_forwarded_host()).toBe('public.example')
    expect(kit.request.get_forwarded_port()).toBe(444)
    expect(kit.request.get_forwarded_path()).toBe('/outer/path')
    expect(kit.request.get_forwarded_prefix()).toBe('/outer')
  })

  it('ignore them from an untrusted peer', () => {
    const { kit } = kitFor({
      config: { trusted_ips: ['10.0.0.0/8'] },
      request: { url: 'http://inner/p', headers, client: { ip: '192.0.2.1', port: 1000 } },
    })
    expect(kit.request.get_forwarded_scheme()).toBe('http')
    expect(kit.request.get_forwarded_host()).toBe('inner')
    expect(kit.request.get_forwarded_port()).toBe(80)
    expect(kit.request.get_forwarded_path()).toBe('/p')
    expect(kit.request.get_forwarded_prefix()).toBeUndefined()
  })

  it('take the port from X-Forwarded-Host when X-Forwarded-Port is absent', () => {
    const { kit } = kitFor({
      config: { trusted_ips: ['0.0.0.0/0'] },
      request: { headers: { 'X-Forwarded-Host': 'a.example:9000' } },
    })
    expect(kit.request.get_forwarded_port()).toBe(9000)
  })

  it('map the listening port through port_maps', () => {
    const { kit } = kitFor({ config: { port_maps: ['80:8000'] }, request: { url: 'http://h:8000/' } })
    expect(kit.request.get_forwarded_port()).toBe(80)
  })

  it('give the prefix the router stripped, only after routing', () => {
    const fixture = { route: { paths: ['/api'], strip_path: true }, request: { url: 'http://h/api/users' } }
    expect(kitFor(fixture, 'access').kit.request.get_forwarded_prefix()).toBe('/api')
    expect(kitFor(fixture, 'rewrite').kit.request.get_forwarded_prefix()).toBeUndefined()
  })

  it('expose regex route captures', () => {
    const { kit } = kitFor({ route: { paths: ['~/users/(?<id>\\d+)'] }, request: { url: 'http://h/users/42' } })
    // Kong's positions 1..n: the captures only, not the whole match
    expect(kit.request.get_uri_captures()).toEqual({ unnamed: ['42'], named: { id: '42' } })
  })
})
