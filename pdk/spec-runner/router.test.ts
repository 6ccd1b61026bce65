import { describe, expect, it } from 'vitest'
import { httpsRequired, matchRoute, type RouteRow } from './router.js'

const req = (over: Partial<Parameters<typeof matchRoute>[1]> = {}) => ({
  method: 'GET',
  host: 'example.test',
  path: '/',
  headers: {},
  protocol: 'http',
  ...over,
})
const ids = (routes: RouteRow[], r: ReturnType<typeof req>) => matchRoute(routes, r)?.id

describe('the router of spec.helpers', () => {
  it('matches hosts exactly and with a leading or trailing wildcard', () => {
    const routes = [
      { id: 'exact', hosts: ['api.test'] },
      { id: 'sub', hosts: ['*.wild.test'] },
      { id: 'tld', hosts: ['shop.*'] },
    ]
    expect(ids(routes, req({ host: 'api.test' }))).toBe('exact')
    expect(ids(routes, req({ host: 'a.wild.test' }))).toBe('sub')
    expect(ids(routes, req({ host: 'wild.test' }))).toBeUndefined()
    expect(ids(routes, req({ host: 'shop.example' }))).toBe('tld')
  })

  it("reads PCRE's (?P<name>) groups in a regex path; one JavaScript cannot read matches nothing", () => {
    const routes = [
      { id: 'named', paths: ['~/users/(?P<user>\\w+)$'] },
      { id: 'bad', paths: ['~/x(?<=a'] },
    ]
    expect(ids(routes, req({ path: '/users/ann' }))).toBe('named')
    expect(ids(routes, req({ path: '/xa' }))).toBeUndefined()
  })

  it('matches path prefixes and ~ regexes; the longer prefix wins', () => {
    const routes = [
      { id: 'short', paths: ['/a'] },
      { id: 'long', paths: ['/a/b'] },
      { id: 'regex', paths: ['~/users/\\d+$'] },
    ]
    expect(ids(routes, req({ path: '/a/b/c' }))).toBe('long')
    expect(ids(routes, req({ path: '/a/x' }))).toBe('short')
    expect(ids(routes, req({ path: '/users/12' }))).toBe('regex')
    expect(ids(routes, req({ path: '/users/x' }))).toBeUndefined()
  })

  it('a route matching more of hosts, methods, paths and headers wins; then regex_priority', () => {
    const routes = [
      { id: 'host', hosts: ['h.test'] },
      { id: 'host+method', hosts: ['h.test'], methods: ['POST'] },
      { id: 'header', headers: { 'x-version': ['2'] } },
    ]
    expect(ids(routes, req({ host: 'h.test', method: 'POST' }))).toBe('host+method')
    expect(ids(routes, req({ host: 'h.test' }))).toBe('host')
    expect(ids(routes, req({ host: 'z.test', headers: { 'X-Version': '2' } }))).toBe('header')
    const prio = [
      { id: 'low', paths: ['~/p'], regex_priority: 0 },
      { id: 'high', paths: ['~/p'], regex_priority: 5 },
    ]
    expect(ids(prio, req({ path: '/p' }))).toBe('high')
  })

  it('matches an http request on a route for https alone, which the runloop then answers 426 or redirects', () => {
    const tls = { id: 'tls', protocols: ['https'] }
    expect(ids([tls], req())).toBe('tls')
    expect(httpsRequired(tls, 'http', 'h.test', '/p?a=1')).toMatchObject({
      status: 426,
      headers: { Connection: 'Upgrade', Upgrade: 'TLS/1.2, HTTP/1.1' },
      body: '{"message":"Please use HTTPS protocol"}',
    })
    expect(httpsRequired({ ...tls, https_redirect_status_code: 301 }, 'http', 'h.test', '/p?a=1')).toEqual({
      status: 301,
      headers: { Location: 'https://h.test/p?a=1' },
      body: '',
    })
    expect(httpsRequired(tls, 'https', 'h.test', '/')).toBeUndefined()
    expect(httpsRequired({ id: 'both', protocols: ['http', 'https'] }, 'http', 'h.test', '/')).toBeUndefined()
  })

  it('refuses a protocol the route does not list', () => {
    expect(ids([{ id: 'tcp', protocols: ['tcp'] }], req())).toBeUndefined()
  })

  it('takes an https request on a route for http alone, as Kong 3 does', () => {
    expect(ids([{ id: 'plain', protocols: ['http'] }], req({ protocol: 'https' }))).toBe('plain')
  })

  it('matches a grpc or grpcs route on any HTTP request, as Kong does (its runloop refuses what does not fit)', () => {
    const grpc = [{ id: 'g', protocols: ['grpc'], paths: ['/hello.HelloService/'] }]
    expect(ids(grpc, req({ path: '/hello.HelloService/SayHello' }))).toBe('g')
    expect(ids([{ id: 'gs', protocols: ['grpcs'] }], req())).toBe('gs')
    expect(ids([{ id: 'gs', protocols: ['grpcs'] }], req({ protocol: 'https' }))).toBe('gs')
    expect(ids([{ id: 'gs', protocols: ['grpcs'] }], req({ protocol: 'tcp' }))).toBeUndefined()
  })
})
