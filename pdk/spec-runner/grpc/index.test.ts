import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { runSpecFile, type SpecResult } from '../session.js'
import { badgeRoot } from '../testing/badge.js'

// proxy_client_grpc on a spec of our own in Kong's style: gRPC routes to grpcbin, the badge plugin
// (testing/badge.ts) refusing a call with kong.response.exit, and `meter`, which counts calls, refuses
// past its limit with kong.response.error(429) as rate-limiting does and echoes what it saw of the
// request in a response header
const METER = {
  'kong/plugins/meter/handler.lua': `
local Meter = { PRIORITY = 900, VERSION = "1.0.0" }
local count = 0
function Meter:access(conf)
  count = count + 1
  kong.ctx.plugin.seen = table.concat({ kong.request.get_scheme(), ngx.var.scheme, kong.request.get_method(),
    kong.request.get_path(), kong.request.get_header("content-type"), tostring(kong.request.get_http_version()),
    kong.request.get_header("x-trace") or "-" }, " ")
  if count > conf.limit then
    return kong.response.error(429, "API rate limit exceeded", { ["X-Meter-Remaining"] = 0, ["Retry-After"] = 60 })
  end
end
function Meter:header_filter(conf)
  if count > conf.limit then return end
  kong.response.set_header("X-Meter-Remaining", conf.limit - count)
  kong.response.set_header("X-Meter-Seen", kong.ctx.plugin.seen)
end
return Meter`,
  'kong/plugins/boom/handler.lua': `
local Boom = { PRIORITY = 700, VERSION = "1.0.0" }
function Boom:access() error("boom") end
return Boom`,
  'kong/plugins/boom/schema.lua': `return { name = "boom", fields = { { config = { type = "record", fields = {} } } } }`,
  'kong/plugins/meter/schema.lua': `
return { name = "meter", fields = { { config = { type = "record", fields = {
  { limit = { type = "integer", default = 3 } },
} } } } }`,
}

const SPEC = `
local helpers = require "spec.helpers"
local cjson = require "cjson"

describe("gRPC through Kong in process #grpc", function()
  lazy_setup(function()
    local bp = helpers.get_db_utils("postgres", nil, { "badge", "meter", "boom" })
    local grpcbin = bp.services:insert({ name = "grpcbin", url = helpers.grpcbin_url })
    local open = bp.routes:insert({ protocols = { "grpc" }, paths = { "/hello.HelloService/" }, service = grpcbin })
    local guarded = bp.routes:insert({ protocols = { "grpc" }, paths = { "/hello.HelloService/" },
      hosts = { "guarded.test" }, service = grpcbin })
    local metered = bp.routes:insert({ protocols = { "grpc" }, paths = { "/hello.HelloService/" },
      hosts = { "metered.test" }, service = grpcbin })
    bp.routes:insert({ protocols = { "grpcs" }, paths = { "/hello.HelloService/" }, hosts = { "tls.test" },
      service = bp.services:insert({ name = "grpcbins", url = helpers.grpcbin_ssl_url }) })
    bp.routes:insert({ protocols = { "grpc" }, paths = { "/hello.HelloService/" }, hosts = { "elsewhere.test" },
      service = bp.services:insert({ name = "elsewhere", url = "grpc://grpc.example.test:50051" }) })
    local ann = bp.consumers:insert({ username = "ann" })
    bp.badges:insert({ consumer = { id = ann.id }, key = "k-1" })
    bp.plugins:insert({ name = "badge", route = { id = guarded.id } })
    bp.plugins:insert({ name = "meter", route = { id = metered.id }, config = { limit = 2 } })
    local boom = bp.routes:insert({ protocols = { "grpc" }, paths = { "/hello.HelloService/" }, hosts = { "boom.test" },
      service = grpcbin })
    bp.plugins:insert({ name = "boom", route = { id = boom.id } })
    assert(helpers.start_kong({ plugins = "bundled,badge,meter,boom" }))
  end)

  it("answers SayHello as grpcbin does", function()
    local ok, res = helpers.proxy_client_grpc(){ service = "hello.HelloService.SayHello" }
    assert.truthy(ok)
    assert.same({ reply = "hello noname" }, cjson.decode(res))
    ok, res = helpers.proxy_client_grpc(){ service = "hello.HelloService.SayHello", body = { greeting = "world" } }
    assert.truthy(ok)
    assert.same({ reply = "hello world" }, cjson.decode(res))
  end)

  it("a plugin's exit(401) is Unauthenticated (HTTP's status: no gRPC content type); -H's metadata reaches it", function()
    local ok, err = helpers.proxy_client_grpc(){ service = "hello.HelloService.SayHello",
      opts = { ["-authority"] = "guarded.test" } }
    assert.falsy(ok)
    assert.equal("ERROR:\\n  Code: Unauthenticated\\n  Message: Unauthorized: HTTP status code 401; "
      .. "transport: missing content-type field\\n", err)
    ok, err = helpers.proxy_client_grpc(){ service = "hello.HelloService.SayHello",
      opts = { ["-authority"] = "guarded.test", ["-H"] = "'X-Badge: k-1'" } }
    assert.truthy(ok, err)
  end)

  it("-v prints the method, the metadata, the headers plugins set and the trailers", function()
    local ok, res = helpers.proxy_client_grpc(){ service = "hello.HelloService.SayHello", body = { greeting = "v" },
      opts = { ["-authority"] = "metered.test", ["-v"] = true, [""] = "-H 'x-trace: a b' -H 'x-other: 1'" } }
    assert.truthy(ok, res)
    assert.matches("Resolved method descriptor:\\nrpc SayHello ( .hello.HelloRequest ) returns ( .hello.HelloResponse );", res, 1, true)
    assert.matches("Request metadata to send:\\nx-other: 1\\nx-trace: a b\\n", res, 1, true)
    assert.matches("x-meter-remaining: 1", res, 1, true)
    assert.matches("x-meter-seen: http http POST /hello.HelloService/SayHello application/grpc 2 a b", res, 1, true)
    assert.matches('Response contents:\\n{\\n  "reply": "hello v"\\n}\\n', res, 1, true)
    assert.matches("Response trailers received:\\n(empty)\\nSent 1 request and received 1 response", res, 1, true)
  end)

  it("kong.response.error(429) is ResourceExhausted (grpc-status), the plugin's headers in the trailers", function()
    local ok, res = helpers.proxy_client_grpc(){ service = "hello.HelloService.SayHello",
      opts = { ["-authority"] = "metered.test", ["-v"] = true } }
    assert.truthy(ok, res)
    ok, res = helpers.proxy_client_grpc(){ service = "hello.HelloService.SayHello",
      opts = { ["-authority"] = "metered.test", ["-v"] = true } }
    assert.falsy(ok)
    assert.matches("Response headers received:\\n(empty)", res, 1, true)
    assert.matches("retry-after: 60", res, 1, true)
    assert.matches("x-meter-remaining: 0", res, 1, true)
    assert.matches("Sent 0 requests and received 0 responses\\nERROR:\\n  Code: ResourceExhausted\\n  Message: ResourceExhausted\\n", res, 1, true)
  end)

  it("a plugin's error is Kong's 500: Unknown, grpc-go reading HTTP's status (no gRPC content type)", function()
    local ok, err = helpers.proxy_client_grpc(){ service = "hello.HelloService.SayHello",
      opts = { ["-authority"] = "boom.test" } }
    assert.falsy(ok)
    assert.equal("ERROR:\\n  Code: Unknown\\n  Message: Internal Server Error: HTTP status code 500; "
      .. "transport: missing content-type field\\n", err)
  end)

  it("streams: ten replies to LotsOfReplies, the greetings joined by LotsOfGreetings", function()
    local ok, res = helpers.proxy_client_grpc(){ service = "hello.HelloService.LotsOfReplies", body = { greeting = "s" } }
    assert.truthy(ok, res)
    local _, n = res:gsub('"reply": "hello s"', "")
    assert.equal(10, n)
    ok, res = helpers.proxy_client_grpc(){ service = "hello.HelloService/LotsOfGreetings",
      opts = { ["-d"] = [['{"greeting":"a"} {"greeting":"b"}']] } }
    assert.truthy(ok, res)
    assert.same({ reply = "hello a, b" }, cjson.decode(res))
  end)

  it("an HTTP request on a gRPC route is refused with 415", function()
    local res = assert(helpers.proxy_client():send({ method = "POST", path = "/hello.HelloService/SayHello" }))
    assert.same({ message = "Non-gRPC request matched gRPC route" }, cjson.decode(assert.res_status(415, res)))
  end)

  it("a grpcs route: refused in plaintext, answered over TLS", function()
    local ok, err = helpers.proxy_client_grpc(){ service = "hello.HelloService.SayHello",
      opts = { ["-authority"] = "tls.test" } }
    assert.falsy(ok)
    assert.matches("Code: Canceled\\n  Message: gRPC request matched gRPCs route", err)
    local ok2, res = helpers.proxy_client_grpcs(){ service = "hello.HelloService.SayHello",
      opts = { ["-authority"] = "tls.test" } }
    assert.truthy(ok2, res)
    assert.same({ reply = "hello noname" }, cjson.decode(res))
  end)

  it("a route without hosts takes any -authority; a method hello.proto lacks is grpcurl's own error", function()
    local ok, err = helpers.proxy_client_grpc(){ service = "hello.HelloService.SayHello",
      opts = { ["-authority"] = "nowhere.test", ["-rpc-header"] = "'x: y'" } }
    assert.truthy(ok, err) -- the open route has no hosts: it takes any
    ok, err = helpers.proxy_client_grpc(){ service = "grpcbin.GRPCBin.DummyUnary" }
    assert.falsy(ok)
    assert.equal('Failed to resolve symbol "grpcbin.GRPCBin.DummyUnary": Symbol not found: grpcbin.GRPCBin.DummyUnary\\n', err)
  end)

  it("a gRPC service broker does not answer is Unavailable, naming it", function()
    local ok, err = helpers.proxy_client_grpc(){ service = "hello.HelloService.SayHello",
      opts = { ["-authority"] = "elsewhere.test" } }
    assert.falsy(ok)
    assert.matches("Code: Unavailable", err, 1, true)
    assert.matches("grpc://grpc.example.test:50051 is not emulated", err, 1, true)
  end)

  it("grpcbin at its own address answers without Kong", function()
    local ok, res = helpers.proxy_client_grpc(helpers.grpcbin_host, helpers.grpcbin_port){
      service = "hello.HelloService.BidiHello", body = { greeting = "x" } }
    assert.truthy(ok, res)
    assert.same({ reply = "hello x" }, cjson.decode(res))
  end)

  it("a grpcurl flag broker does not emulate fails naming it", function()
    local ok, err = pcall(helpers.proxy_client_grpc(), { service = "hello.HelloService.SayHello",
      opts = { ["-protoset"] = "x.protoset" } })
    assert.falsy(ok)
    assert.matches("-protoset is not emulated by broker", err, 1, true)
  end)

  it("with Kong stopped, grpcurl cannot dial its listener", function()
    local call = helpers.proxy_client_grpc()
    helpers.stop_kong()
    local ok, err = call{ service = "hello.HelloService.SayHello" }
    assert.is_nil(ok)
    assert.equal('Failed to dial target host "127.0.0.1:9002": dial tcp 127.0.0.1:9002: connect: connection refused\\n', err)
  end)
end)
`

describe('proxy_client_grpc: grpcurl through Kong in process', () => {
  it('runs a spec of our own in Kong style: grpcbin answers, plugin exits become gRPC statuses', async () => {
    const root = badgeRoot({ ...METER, 'spec/grpc_spec.lua': SPEC })
    const results: SpecResult[] = await runSpecFile({
      root,
      file: join(root, 'spec/grpc_spec.lua'),
      shown: 'spec/grpc_spec.lua',
      timeoutMs: 10_000,
    })
    const failed = results.filter((r) => r.status !== 'success').map((r) => `${r.status} ${r.name}: ${r.message}`)
    expect(failed).toEqual([])
    expect(results).toHaveLength(13)
  })
})
