import { describe, expect, it } from 'vitest'
import { allPass, runSpec } from './testing/specs.js'
import { ZipkinCollector } from './zipkin.js'

const get = (path: string, query = '') => ({ method: 'GET', path, query, headers: {}, body: '' })
const post = (body: unknown) => ({
  method: 'POST',
  path: '/api/v2/spans',
  query: '',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
})
const NOW = 1_700_000_000_000
const span = (over: Record<string, unknown>) => ({
  traceId: 'AB',
  id: '1',
  name: 'GET',
  kind: 'SERVER',
  timestamp: (NOW - 1000) * 1000,
  duration: 5,
  localEndpoint: { serviceName: 'kong' },
  ...over,
})
const body = (a: { body: string } | { raise: string }) => JSON.parse('body' in a ? a.body : 'null') as unknown

describe('the Zipkin collector in process', () => {
  it('keeps posted spans as Zipkin stores them and answers a trace by its id', () => {
    const z = new ZipkinCollector()
    const posted = z.answer(
      post([
        span({ tags: {}, annotations: [], remoteEndpoint: null }),
        span({ id: '2', parentId: '1', name: 'GET (proxy)', tags: { a: 1 }, duration: 0 }),
      ]),
      NOW,
    )
    expect(posted).toMatchObject({ status: 202 })
    const trace = body(z.answer(get('/api/v2/trace/00000000000000ab'), NOW))
    expect(trace).toEqual([
      {
        traceId: '00000000000000ab',
        id: '0000000000000001',
        name: 'get',
        kind: 'SERVER',
        timestamp: (NOW - 1000) * 1000,
        duration: 5,
        localEndpoint: { serviceName: 'kong' },
      },
      {
        traceId: '00000000000000ab',
        id: '0000000000000002',
        parentId: '0000000000000001',
        name: 'get (proxy)',
        kind: 'SERVER',
        timestamp: (NOW - 1000) * 1000,
        localEndpoint: { serviceName: 'kong' },
        tags: { a: '1' },
      },
    ])
    // a 128-bit id whose upper half is zero is the 64-bit one
    expect(z.answer(get(`/api/v2/trace/${'0'.repeat(16)}00000000000000AB`), NOW)).toMatchObject({ status: 200 })
    expect(z.answer(get('/api/v2/trace/ffff'), NOW)).toMatchObject({ status: 404 })
  })

  it('refuses a body that is no list of spans with 400', () => {
    const z = new ZipkinCollector()
    expect(z.answer({ ...post([]), body: '{"traceId":"1"}' }, NOW)).toMatchObject({ status: 400 })
    expect(z.answer(post([span({ id: 'xyz' })]), NOW)).toMatchObject({ status: 400 })
  })

  it('finds traces by service, remote service, span name and annotation query, the latest first, up to limit', () => {
    const z = new ZipkinCollector()
    z.answer(post([span({ traceId: 'a1', remoteEndpoint: { serviceName: 'Orders', port: 80 } })]), NOW)
    z.answer(post([span({ traceId: 'a2', timestamp: (NOW - 500) * 1000, tags: { error: 'true' } })]), NOW)
    z.answer(post([span({ traceId: 'a3', timestamp: (NOW - 2 * 86_400_000) * 1000 })]), NOW)
    const ids = (query: string) =>
      (body(z.answer(get('/api/v2/traces', query), NOW)) as Array<Array<{ traceId: string }>>).map((t) => t[0]!.traceId)
    expect(ids('')).toEqual(['00000000000000a2', '00000000000000a1'])
    expect(ids('remoteServiceName=orders')).toEqual(['00000000000000a1'])
    expect(ids('serviceName=kong&limit=1')).toEqual(['00000000000000a2'])
    expect(ids('annotationQuery=error%3Dtrue')).toEqual(['00000000000000a2'])
    expect(ids('spanName=post')).toEqual([])
    expect(ids(`endTs=${NOW}&lookback=${3 * 86_400_000}`)).toHaveLength(3)
    expect(body(z.answer(get('/api/v2/services'), NOW))).toEqual(['kong'])
    expect(body(z.answer(get('/api/v2/remoteServices', 'serviceName=kong'), NOW))).toEqual(['orders'])
  })

  it('names what it does not emulate', () => {
    const answer = new ZipkinCollector().answer(get('/api/v2/dependencies'), NOW)
    expect(answer).toEqual({ raise: expect.stringContaining('does not emulate GET /api/v2/dependencies') as string })
  })
})

// `span-post` reports each request as one Zipkin span from a timer, as Kong's zipkin plugin reports through its
// queue; the spec reads it back from the collector Kong's helpers name
const SPAN_POST = {
  'kong/plugins/span-post/handler.lua': `
local http = require "resty.http"
local cjson = require "cjson"
local SpanPost = { PRIORITY = 9, VERSION = "1.0.0" }
local function send(premature, url, body)
  local res, err = http.new():request_uri(url, { method = "POST", body = body,
    headers = { ["content-type"] = "application/json" } })
  _G.span_post_result = res and res.status or err
end
function SpanPost:log(conf)
  -- none when Kong's router matched no route
  local b = ngx.ctx.balancer_data
  local span = { traceId = kong.request.get_header("x-trace"), id = "5", name = kong.request.get_method(),
    kind = "SERVER", timestamp = ngx.now() * 1000000, localEndpoint = { serviceName = "kong" },
    remoteEndpoint = b and { serviceName = kong.router.get_service().name, port = b.port, ipv4 = b.ip },
    tags = { ["peer.hostname"] = b and b.hostname, ["http.host"] = kong.request.get_host() } }
  ngx.timer.at(0, send, conf.url, cjson.encode({ span }))
end
return SpanPost`,
  'kong/plugins/span-post/schema.lua': `
return { name = "span-post", fields = { { config = { type = "record", fields = {
  { url = { type = "string", required = true } },
} } } } }`,
}

const SPAN_SPEC = `
local helpers = require "spec.helpers"
local cjson = require "cjson"
describe("Plugin: span-post", function()
  local proxy_client, zipkin_client
  lazy_setup(function()
    local bp = helpers.get_db_utils("postgres", nil, { "span-post" })
    local service = bp.services:insert { name = "orders" }
    bp.routes:insert { hosts = { "span.test" }, service = service }
    bp.plugins:insert { name = "span-post", config = {
      url = string.format("http://%s:%d/api/v2/spans", helpers.zipkin_host, helpers.zipkin_port) } }
    assert(helpers.start_kong({ plugins = "bundled,span-post" }))
    proxy_client = helpers.proxy_client()
    zipkin_client = helpers.http_client(helpers.zipkin_host, helpers.zipkin_port)
  end)

  it("the collector keeps the spans the plugin posted", function()
    assert.response(proxy_client:get("/", { headers = { host = "span.test", ["x-trace"] = "00C0FFEE" } })).has.status(200)
    assert.equal(202, _G.span_post_result)
    local res = zipkin_client:get("/api/v2/traces", { query = { remoteServiceName = "orders", limit = 10 } })
    local traces = cjson.decode(assert.res_status(200, res))
    local s = traces[1][1]
    assert.equal("0000000000c0ffee", s.traceId)
    assert.equal("get", s.name)
    assert.same({ serviceName = "orders", port = helpers.mock_upstream_port, ipv4 = helpers.mock_upstream_host },
      s.remoteEndpoint)
    assert.equal(helpers.mock_upstream_host, s.tags["peer.hostname"])
    local one = zipkin_client:get("/api/v2/trace/0000000000c0ffee")
    assert.equal(1, #cjson.decode(assert.res_status(200, one)))
    assert.res_status(404, zipkin_client:get("/api/v2/trace/0000000000000bad"))
  end)

  it("a request no route matched has no balancer_data; without a Host header it names the proxy's listener", function()
    assert.response(proxy_client:get("/", { headers = { ["x-trace"] = "0bad" } })).has.status(404)
    local span = cjson.decode(assert.res_status(200, zipkin_client:get("/api/v2/trace/0bad")))[1]
    assert.is_nil(span.remoteEndpoint)
    -- Kong's proxy_client connects to its listener's address, 0.0.0.0:9000, and resty.http sends it as Host
    assert.same({ ["http.host"] = "0.0.0.0" }, span.tags)
  end)

  it("another path of the collector fails the spec's line, naming it", function()
    local ok, err = pcall(zipkin_client.get, zipkin_client, "/api/v2/dependencies")
    assert.False(ok)
    assert.matches("does not emulate GET /api/v2/dependencies", err, 1, true)
  end)
end)
`

describe('pdk test: a plugin reports to the Zipkin collector of Kong spec helpers', () => {
  it('posts spans from a timer and reads them back through the query API', async () => {
    allPass(await runSpec(SPAN_SPEC, SPAN_POST), 3)
  })
})
