import { describe, expect, it } from 'vitest'
import type { Fixture } from '../../fixture/index.js'
import { buildContext } from '../../fixture/setup.js'
import type { CallRecord } from '../../kit/private/trace.js'
import { KitBridge } from '../bridge.js'
import { createHost } from './index.js'

// The host side of broker's resty.http: a request answered from the fixture's `outbound`, kept for
// expect.outbound, shown in the trace; one no entry answers kept to fail the fixture.
function hostFor(outbound: Fixture['outbound']) {
  const fixture = { name: 'h', request: { url: 'http://api.test/' }, plugins: [], outbound } as Fixture
  const ctx = buildContext(fixture)
  const trace: CallRecord[] = []
  const bridge = new KitBridge({})
  bridge.record = (r) => trace.push(r)
  const host = createHost(bridge)
  host.begin(ctx)
  return { host, ctx, trace }
}

const URL = 'https://auth.example/introspect'

describe('http_send', () => {
  it('answers status, reason, headers and body, records the request and shows the call in the trace', () => {
    const { host, ctx, trace } = hostFor([{ request: { url: URL }, response: { status: 200, body: { active: true } } }])
    expect(host.call('http_enabled')).toEqual([true])
    const got = host.call('http_send', 'request_uri', 'POST', URL, { Host: 'auth.example' }, 'token=a')
    expect(got).toEqual([200, 'OK', { 'Content-Type': 'application/json' }, '{"active":true}'])
    expect(ctx.outbound).toEqual([{ method: 'POST', url: URL, headers: { Host: 'auth.example' }, body: 'token=a' }])
    expect(trace).toEqual([{ call: 'resty.http.request_uri', args: ['POST', URL], returns: [200] }])
    expect(host.unmatched).toBeUndefined()
  })

  it("answers an entry's error as nil, err", () => {
    const { host, trace } = hostFor([{ request: { url: URL }, response: { error: 'timeout' } }])
    expect(host.call('http_send', 'request', 'GET', URL, {}, undefined)).toEqual([undefined, 'timeout'])
    expect(trace[0]).toEqual({ call: 'resty.http.request', args: ['GET', URL], returns: [undefined, 'timeout'] })
  })

  it('keeps the first call no entry answers, which fails the fixture, and shows it as thrown', () => {
    const { host, ctx, trace } = hostFor([{ request: { url: 'https://other.example/' }, response: { status: 200 } }])
    const [ok, message] = host.call('http_send', 'request_uri', 'GET', URL, {}, undefined)
    expect(ok).toBe(false)
    expect(message).toMatch(/^resty\.http\.request_uri\(GET https:\/\/auth\.example\/introspect\) matches no entry/)
    expect(host.unmatched).toBe(message)
    host.call('http_send', 'request_uri', 'GET', 'https://third.example/', {}, undefined)
    expect(host.unmatched).toBe(message)
    expect(ctx.outbound.map((r) => r.url)).toEqual([URL, 'https://third.example/'])
    expect(trace[0]).toEqual({ call: 'resty.http.request_uri', args: ['GET', URL], throws: message })
  })

  it('is off for a fixture without outbound', () => {
    expect(hostFor(undefined).host.call('http_enabled')).toEqual([false])
  })
})
