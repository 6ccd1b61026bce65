import { describe, it } from 'vitest'
import { allPass, runSpec } from './testing/specs.js'

// nginx server blocks a spec serves beside Kong (start_kong's fixtures.http_mock) and spec.helpers.http_mock's
// routes: their Lua answers in process, both for a request Kong proxies to them (a plugin's set_target, as
// ai-proxy's upstream_url does) and for a plugin's own resty.http call (ai-request-transformer's).
const AIM = {
  'kong/plugins/aim/handler.lua': `
local Aim = { PRIORITY = 5, VERSION = "1.0.0" }
function Aim:access(conf)
  if conf.call then
    local httpc, res, err = require("resty.http").new()
    if conf.two_steps then
      assert(httpc:connect { scheme = "http", host = "127.0.0.1", port = conf.port })
      res, err = httpc:request { method = "POST", path = conf.call, body = "ping", headers = { ["X-Who"] = "aim" } }
      if res then res.body = res:read_body() end
    else
      res, err = httpc:request_uri("http://127.0.0.1:" .. conf.port .. conf.call,
        { method = "POST", body = "ping", headers = { ["X-Who"] = "aim" } })
    end
    if not res then return kong.response.exit(599, { err = err }) end
    return kong.response.exit(res.status, { body = res.body, type = res.headers["content-type"] })
  end
  kong.service.set_target("127.0.0.1", conf.port)
  kong.service.request.set_path(conf.path)
end
return Aim`,
  'kong/plugins/aim/schema.lua': `
return { name = "aim", fields = { { config = { type = "record", fields = {
  { port = { type = "integer", required = true } },
  { path = { type = "string", default = "/" } },
  { call = { type = "string" } },
  { two_steps = { type = "boolean", default = false } },
} } } } }`,
}

// `fn-call` calls a function over HTTP in its access phase and answers with what it got, as Kong's
// azure-functions does: the function's host is a name only the spec's dns_mock resolves
const FN_CALL = {
  'kong/plugins/fn-call/handler.lua': `
local http = require "resty.http"
local FnCall = { PRIORITY = 749, VERSION = "1.0.0" }
function FnCall:access(conf)
  local res, err = http.new():request_uri(conf.url, { method = kong.request.get_method(),
    path = kong.request.get_path(), query = kong.request.get_query(), body = kong.request.get_raw_body(),
    headers = { ["x-fn"] = "called" } })
  if not res then return kong.response.exit(500, { message = err }) end
  -- Kong's configuration enables Via with server_tokens (its default headers)
  local via = kong.configuration.enabled_headers["Via"] and "1.1 kong" or nil
  return kong.response.exit(res.status, res.body, { ["x-fn-header"] = res.headers["x-from-mock"], Via = via })
end
return FnCall`,
  'kong/plugins/fn-call/schema.lua': `
return { name = "fn-call", fields = { { config = { type = "record", fields = {
  { url = { type = "string", required = true } },
} } } } }`,
}

const SPEC = `
local helpers = require "spec.helpers"
local http_mock = require "spec.helpers.http_mock"
local cjson = require "cjson"

describe("http_mock routes, dns_mock", function()
  local mock, port, proxy_client
  lazy_setup(function()
    port = helpers.get_available_port()
    mock = http_mock.new("127.0.0.1:" .. port, {
      ["/"] = {
        access = [[
          ngx.header["X-From-Mock"] = "yes"
          ngx.say(require("cjson").encode({ method = ngx.req.get_method(), uri = ngx.var.request_uri,
            args = ngx.req.get_uri_args(), fn = ngx.req.get_headers()["x-fn"], body = ngx.req.get_body_data() }))
        ]],
      },
      ["= /teapot"] = { directives = { [[return 418 "short and stout"]] } },
      ["/content"] = { content = [[ ngx.status = 201 ngx.print("made ", ngx.var.http_x_fn) ngx.exit(ngx.OK) ]],
        log = [[ _G.mock_logged = ngx.var.request_uri ]] },
      ["~ ^/fail"] = { access = [[ error("mock broke") ]] },
      ["/odd"] = { directives = { "proxy_pass http://elsewhere;" } },
    })
    assert(mock:start())
    local bp = helpers.get_db_utils("postgres", nil, { "fn-call" })
    local fn = bp.routes:insert { hosts = { "fn.test" } }
    bp.plugins:insert { route = { id = fn.id }, name = "fn-call",
      config = { url = "http://fn.example.test:" .. port } }
    -- port 1 on loopback: nothing listens there
    local closed = bp.routes:insert { hosts = { "closed.test" } }
    bp.plugins:insert { route = { id = closed.id }, name = "fn-call", config = { url = "http://127.0.0.1:1" } }
    local svc = bp.services:insert { host = "svc.example.test", port = port, path = "/content" }
    bp.routes:insert { hosts = { "svc.test" }, service = svc }
    local fixtures = { dns_mock = helpers.dns_mock.new() }
    fixtures.dns_mock:A { name = "fn.example.test", address = "127.0.0.1" }
    fixtures.dns_mock:CNAME { name = "svc.example.test", cname = "fn.example.test" }
    assert(helpers.start_kong({ plugins = "bundled,fn-call" }, nil, nil, fixtures))
    proxy_client = helpers.proxy_client()
  end)

  it("a plugin's resty.http in its access phase reaches the mock through the dns_mock; its access Lua answers", function()
    local res = proxy_client:post("/a/b", { query = { x = "1" }, body = "hello", headers = { host = "fn.test" } })
    local json = cjson.decode(assert.res_status(200, res))
    assert.same({ method = "POST", uri = "/a/b?x=1", args = { x = "1" }, fn = "called", body = "hello" }, json)
    assert.equal("yes", res.headers["x-fn-header"])
    assert.equal("1.1 kong", res.headers["via"])
    local logs = mock:retrieve_mocking_logs()
    assert.equal(1, #logs)
    assert.equal("/a/b?x=1", logs[1].req.uri)
    assert.equal("called", logs[1].req.headers["x-fn"])
  end)

  it("a service on a name the dns_mock resolves to the mock: its content Lua answers", function()
    local res = proxy_client:get("/", { headers = { host = "svc.test", ["x-fn"] = "proxied" } })
    assert.equal("made proxied", assert.res_status(201, res))
    -- the service's path joined with the request's, as Kong joins them
    assert.equal("/content/", mock:get_request().uri)
    -- its log Lua ran after the answer
    assert.equal("/content/", _G.mock_logged)
  end)

  it("return directives, an error in the mock's Lua (500), and get_client", function()
    local client = mock:get_client()
    assert.equal("short and stout", assert.res_status(418, client:get("/teapot")))
    assert.res_status(500, client:get("/fail/now"))
    assert.equal("yes", client:get("/x").headers["x-from-mock"])
  end)

  it("a directive broker does not emulate fails the request, the session's err naming it", function()
    mock:clean()
    assert.res_status(500, mock:get_client():get("/odd"))
    local session = mock:get_session()
    assert.matches("the directive 'proxy_pass http://elsewhere;' is not emulated by broker", session.err, 1, true)
  end)

  it("a route field broker does not emulate raises naming it", function()
    local ok, err = pcall(http_mock.new, 1234, { ["/"] = { rewrite = "ngx.exit(200)" } })
    assert.False(ok)
    assert.matches("the route field 'rewrite' is not emulated by broker", err, 1, true)
  end)

  it("a spec that replaces resty.http's request_uri changes every client's (azure-functions' specs do)", function()
    local http = require "resty.http"
    local original = http.request_uri
    http.request_uri = function(self, uri, params)
      local parsed = assert(http:parse_uri(uri))
      params.path = "/content"
      return original(self, parsed[1] .. "://" .. parsed[2] .. ":" .. parsed[3], params)
    end
    local res = proxy_client:get("/", { headers = { host = "fn.test" } })
    http.request_uri = original
    assert.equal("made called", assert.res_status(201, res))
  end)

  it("a loopback port nothing answers in process: the connection is refused, as a real one is", function()
    local res = proxy_client:get("/", { headers = { host = "closed.test" } })
    assert.same({ message = "connection refused" }, cjson.decode(assert.res_status(500, res)))
  end)

  it("without the dns_mock, the name does not resolve", function()
    assert(helpers.restart_kong({ plugins = "bundled,fn-call" }))
    proxy_client = helpers.proxy_client()
    local res = proxy_client:get("/", { headers = { host = "fn.test" } })
    assert.matches("resty.http to fn.example.test:" .. port .. " is not emulated", assert.res_status(500, res), 1, true)
  end)
end)
`

// an older plugin spec's mock: nginx server blocks handed to start_kong, rendered as Kong renders its template
const BLOCK_SPEC = `
local helpers = require "spec.helpers"
local cjson = require "cjson"

describe("start_kong's fixtures.http_mock", function()
  local proxy_client
  lazy_setup(function()
    local bp = helpers.get_db_utils("postgres", nil, { "fn-call" })
    local fn = bp.routes:insert { hosts = { "fn.test" } }
    bp.plugins:insert { route = { id = fn.id }, name = "fn-call", config = { url = "http://lambda.example.test:10001" } }
    local svc = bp.services:insert { url = "http://localhost:10002" }
    bp.routes:insert { hosts = { "svc.test" }, service = svc }
    local fixtures = { dns_mock = helpers.dns_mock.new(), http_mock = {} }
    fixtures.dns_mock:A { name = "lambda.example.test", address = "127.0.0.1" }
    fixtures.http_mock.lambda = [[
      server {
        server_name mock_lambda;
        listen 10001 ssl;
> if ssl_cert[1] then
        ssl_certificate $(ssl_cert[1]);
> else
        ssl_certificate \${{SSL_CERT}};
> end
        location ~ "/functions/(?:[^/])*/invocations" {
          content_by_lua_block {
            -- a brace in a string or a comment is no block's end: }
            local body = "{\\"fn\\":\\"" .. ngx.var.uri:match("functions/([^/]*)/") .. "\\"}"
            ngx.header["Content-Type"] = "application/json"
            ngx.say(body)
          }
        }
        location = /teapot { return 418; }
      }
      server {
        listen 127.0.0.1:10002;
        location / { access_by_lua_block { ngx.print("{ok}") ngx.exit(200) } }
      }
    ]]
    assert(helpers.start_kong({ plugins = "bundled,fn-call" }, nil, nil, fixtures))
    proxy_client = helpers.proxy_client()
  end)

  it("each server answers on its listen port while Kong runs", function()
    local res = proxy_client:get("/functions/hello/invocations", { headers = { host = "fn.test" } })
    assert.same({ fn = "hello" }, cjson.decode(assert.res_status(200, res)))
    assert.equal("{ok}", assert.res_status(200, proxy_client:get("/", { headers = { host = "svc.test" } })))
    assert.res_status(418, proxy_client:get("/teapot", { headers = { host = "fn.test" } }))
  end)

  it("a directive broker does not emulate: start_kong answers nil and an error naming it", function()
    helpers.stop_kong()
    local ok, err = helpers.start_kong({}, nil, nil, { http_mock = {
      odd = "server { listen 10003; location / { proxy_pass http://elsewhere; } }" } })
    assert.is_nil(ok)
    assert.matches("fixtures.http_mock.odd: the directive 'proxy_pass' in a location is not emulated", err, 1, true)
  end)
end)
`

// a plugin's target (kong.service.set_target) on start_kong's server blocks: their location Lua answers it
const TARGET_SPEC = `
local helpers = require "spec.helpers"
local cjson = require "cjson"
describe("mock", function()
  local client
  lazy_setup(function()
    local bp = helpers.get_db_utils("postgres", nil, { "aim" })
    local svc = bp.services:insert { host = "localhost", port = 8080 }
    for _, p in ipairs({ "/good", "/prefix/x", "/re/openai", "/missing", "/boom" }) do
      local r = bp.routes:insert { paths = { "/t" .. p }, service = svc }
      bp.plugins:insert { name = "aim", route = { id = r.id }, config = { port = 30111, path = p } }
    end
    assert(helpers.start_kong({ plugins = "bundled,aim" }, nil, nil, { http_mock = { llm = [[
      server {
        server_name llm;
        listen 30111;
        default_type 'application/json';
        location = "/good" {
          content_by_lua_block {
            ngx.req.read_body()
            local body = require("cjson").decode(ngx.req.get_body_data())
            ngx.status = 201
            ngx.header.x_seen = ngx.req.get_headers()["x-token"]
            ngx.print(require("cjson").encode({ got = body.q, uri = ngx.var.request_uri }))
          }
        }
        location /prefix {
          content_by_lua_block { ngx.say("prefix ", ngx.var.uri) }
        }
        location ~/re/(?<provider>[a-z]+) {
          content_by_lua_block {
            ngx.header["Content-Type"] = "text/plain"
            ngx.print(ngx.var.provider)
            ngx.exit(200)
            ngx.print(" never")
          }
        }
        location = "/boom" {
          content_by_lua_block { error("boom") }
        }
      }
    ]] } }))
    client = helpers.proxy_client()
  end)
  lazy_teardown(function() helpers.stop_kong() end)
  it("exact", function()
    local res = client:post("/t/good?a=1", { body = { q = "hi" }, headers = { ["Content-Type"] = "application/json", ["X-Token"] = "t" } })
    local json = cjson.decode(assert.res_status(201, res))
    assert.same({ got = "hi", uri = "/good?a=1" }, json)
    assert.equal("t", res.headers["x-seen"])
    assert.matches("application/json", res.headers["content-type"], 1, true)
  end)
  it("prefix", function()
    assert.equal("prefix /prefix/x\\n", (assert(client:get("/t/prefix/x")):read_body()))
  end)
  it("regex", function()
    assert.equal("openai", assert.res_status(200, client:get("/t/re/openai")))
  end)
  it("no location", function()
    assert.res_status(404, client:get("/t/missing"))
  end)
  it("an error in the Lua", function()
    assert.res_status(500, client:get("/t/boom"))
  end)
end)`

// a plugin's resty.http to an http_mock's regex route (its captures), a string route, and connect-then-request
const CALL_SPEC = `
local helpers = require "spec.helpers"
local http_mock = require "spec.helpers.http_mock"
local cjson = require "cjson"
describe("routes", function()
  local client, mock
  lazy_setup(function()
    mock = http_mock.new(30112, {
      ["~/chat/(?<provider>[a-z]+)"] = { content = [[
        ngx.header["Content-Type"] = "application/json"
        ngx.req.read_body()
        ngx.say(require("cjson").encode({ provider = ngx.var.provider, body = ngx.req.get_body_data(),
          who = ngx.req.get_headers()["X-Who"] }))
      ]] },
    })
    assert(mock:start())
    local plain = http_mock.new(30114, [[ngx.print("hello from " .. ngx.var.uri)]])
    assert(plain:start())
    local bp = helpers.get_db_utils("postgres", nil, { "aim" })
    local r = bp.routes:insert { hosts = { "aim.test" } }
    bp.plugins:insert { name = "aim", route = { id = r.id }, config = { port = 30112, call = "/chat/cohere" } }
    local str = bp.routes:insert { hosts = { "str.test" } }
    bp.plugins:insert { name = "aim", route = { id = str.id }, config = { port = 30114, call = "/any" } }
    local two = bp.routes:insert { hosts = { "two.test" } }
    bp.plugins:insert { name = "aim", route = { id = two.id }, config = { port = 30112, call = "/chat/mistral", two_steps = true } }
    assert(helpers.start_kong({ plugins = "bundled,aim" }))
    client = helpers.proxy_client()
  end)
  lazy_teardown(function() helpers.stop_kong() mock:stop() end)
  it("calls", function()
    local json = cjson.decode(assert.res_status(200, client:get("/", { headers = { host = "aim.test" } })))
    assert.same({ provider = "cohere", body = "ping", who = "aim" }, cjson.decode(json.body))
    assert.equal("application/json", json.type)
    local sent = mock:get_request()
    assert.equal("POST", sent.method)
    assert.equal("/chat/cohere", sent.uri)
  end)
  it("a string of Lua is the mock's one location", function()
    local json = cjson.decode(assert.res_status(200, client:get("/", { headers = { host = "str.test" } })))
    assert.equal("hello from /any", json.body)
  end)
  it("connects, then requests", function()
    local json = cjson.decode(assert.res_status(200, client:get("/", { headers = { host = "two.test" } })))
    assert.same({ provider = "mistral", body = "ping", who = "aim" }, cjson.decode(json.body))
  end)
end)`

// a service on a name start_kong's fixtures.dns_mock resolves to a server block's listen port
const NAMED_SPEC = `
local helpers = require "spec.helpers"
local cjson = require "cjson"
describe("dns", function()
  local client
  lazy_setup(function()
    local bp = helpers.get_db_utils("postgres", nil, { "aim" })
    local svc = bp.services:insert { host = "llm.example.test", port = 30113 }
    bp.routes:insert { hosts = { "svc.test" }, service = svc }
    local r = bp.routes:insert { hosts = { "call.test" } }
    bp.plugins:insert { name = "aim", route = { id = r.id }, config = { port = 30113, call = "/named" } }
    local fixtures = { http_mock = { named = [[
      server {
        listen 30113;
        location / { content_by_lua_block { ngx.print("named ", ngx.var.uri) } }
      }
    ]] }, dns_mock = helpers.dns_mock.new({ mocks_only = true }) }
    fixtures.dns_mock:A { name = "llm.example.test", address = "127.0.0.1" }
    assert(helpers.start_kong({ plugins = "bundled,aim" }, nil, nil, fixtures))
    client = helpers.proxy_client()
  end)
  lazy_teardown(function() helpers.stop_kong() end)
  it("proxies to the name", function()
    assert.equal("named /x", assert.res_status(200, client:get("/x", { headers = { host = "svc.test" } })))
  end)
end)`

// a service answering gzip, as an LLM provider may: `regzip` reads the service's body (buffered), inflates it,
// and sends it on deflated again from body_filter; `setgz` sets a deflated body with kong.response.set_raw_body
const REGZIP = {
  'kong/plugins/regzip/handler.lua': `
local gzip = require "kong.tools.gzip"
local Regzip = { PRIORITY = 5, VERSION = "1.0.0" }
function Regzip:access(conf) kong.service.request.enable_buffering() end
function Regzip:header_filter(conf)
  local raw = kong.service.response.get_raw_body()
  kong.ctx.plugin.size = #raw
  kong.ctx.plugin.text = gzip.inflate_gzip(raw)
  kong.response.set_header("X-Service-Bytes", #raw)
  kong.response.set_header("X-Inflated", kong.ctx.plugin.text)
  kong.response.clear_header("Content-Length")
end
function Regzip:body_filter(conf)
  -- the whole body once it has all come (nginx's last chunk, ngx.arg[2])
  if not ngx.arg[2] then ngx.arg[1] = nil return end
  if conf.set then return kong.response.set_raw_body(gzip.deflate_gzip("set: " .. kong.ctx.plugin.text)) end
  ngx.arg[1] = gzip.deflate_gzip("again: " .. kong.ctx.plugin.text)
  ngx.arg[2] = true
end
return Regzip`,
  'kong/plugins/regzip/schema.lua': `
return { name = "regzip", fields = { { config = { type = "record", fields = {
  { set = { type = "boolean", default = false } },
} } } } }`,
}

const GZIP_SPEC = `
local helpers = require "spec.helpers"
local gzip = require "kong.tools.gzip"
describe("a gzip body", function()
  local client, direct
  lazy_setup(function()
    local bp = helpers.get_db_utils("postgres", nil, { "regzip" })
    local svc = bp.services:insert { host = "127.0.0.1", port = 30114 }
    local r = bp.routes:insert { hosts = { "arg.test" }, service = svc }
    bp.plugins:insert { name = "regzip", route = { id = r.id } }
    local r2 = bp.routes:insert { hosts = { "set.test" }, service = svc }
    bp.plugins:insert { name = "regzip", route = { id = r2.id }, config = { set = true } }
    local fixtures = { http_mock = { gz = [[
      server {
        listen 30114;
        location / { content_by_lua_block {
          ngx.header["Content-Encoding"] = "gzip"
          ngx.print(require("kong.tools.gzip").deflate_gzip(string.rep("caf\\195\\169 ", 40) .. ngx.var.uri))
        } }
      }
    ]] } }
    assert(helpers.start_kong({ plugins = "bundled,regzip" }, nil, nil, fixtures))
    client = helpers.proxy_client()
    direct = helpers.http_client("127.0.0.1", 30114)
  end)
  lazy_teardown(function() helpers.stop_kong() end)
  it("reaches a plugin byte for byte, and what it deflates in body_filter reaches the client so", function()
    local sent = assert.res_status(200, direct:get("/a"))
    local res = client:get("/a", { headers = { host = "arg.test" } })
    local body = assert.res_status(200, res)
    assert.equal(tostring(#sent), res.headers["x-service-bytes"])
    assert.equal(string.rep("caf\\195\\169 ", 40) .. "/a", res.headers["x-inflated"])
    assert.equal("again: " .. string.rep("caf\\195\\169 ", 40) .. "/a", gzip.inflate_gzip(body))
  end)
  it("set with kong.response.set_raw_body", function()
    local body = assert.res_status(200, client:get("/b", { headers = { host = "set.test" } }))
    assert.equal("set: " .. string.rep("caf\\195\\169 ", 40) .. "/b", gzip.inflate_gzip(body))
  end)
end)`

// `lastbuf` tells in its last body_filter call how many calls there were and what the last chunk held
const LASTBUF = {
  'kong/plugins/lastbuf/handler.lua': `
local Lastbuf = { PRIORITY = 5, VERSION = "1.0.0" }
function Lastbuf:access(conf)
  if conf.exit then return kong.response.exit(200, "bye", { ["Content-Type"] = "text/plain" }) end
end
function Lastbuf:body_filter(conf)
  local ctx = kong.ctx.plugin
  ctx.calls = (ctx.calls or 0) + 1
  if ngx.arg[2] then ngx.arg[1] = (ngx.arg[1] or "") .. "|calls=" .. ctx.calls .. ",last=" .. #(ngx.arg[1] or "") end
end
return Lastbuf`,
  'kong/plugins/lastbuf/schema.lua': `
return { name = "lastbuf", fields = { { config = { type = "record", fields = {
  { exit = { type = "boolean", default = false } },
} } } } }`,
}

const LASTBUF_SPEC = `
local helpers = require "spec.helpers"
describe("body_filter's chunks", function()
  local client
  lazy_setup(function()
    local bp = helpers.get_db_utils("postgres", nil, { "lastbuf" })
    local svc = bp.services:insert { host = "127.0.0.1", port = 30115 }
    local r = bp.routes:insert { hosts = { "svc.test" }, service = svc }
    bp.plugins:insert { name = "lastbuf", route = { id = r.id } }
    local exit = bp.routes:insert { hosts = { "exit.test" } }
    bp.plugins:insert { name = "lastbuf", route = { id = exit.id }, config = { exit = true } }
    local fixtures = { http_mock = { one = [[
      server {
        listen 30115;
        location / { content_by_lua_block { ngx.print("data") } }
      }
    ]] } }
    assert(helpers.start_kong({ plugins = "bundled,lastbuf" }, nil, nil, fixtures))
    client = helpers.proxy_client()
  end)
  lazy_teardown(function() helpers.stop_kong() end)
  it("a service's body: its data, then an empty last chunk, as nginx's proxy passes it on", function()
    assert.equal("data|calls=2,last=0", assert.res_status(200, client:get("/", { headers = { host = "svc.test" } })))
  end)
  it("an answer Kong makes itself: one chunk", function()
    assert.equal("bye|calls=1,last=3", assert.res_status(200, client:get("/", { headers = { host = "exit.test" } })))
  end)
end)`

describe('pdk test: http_mock routes run in the spec VM, names resolve through dns_mock', () => {
  it('answers as the routes say, from a phase and as a service, and names what is not emulated', async () => {
    allPass(await runSpec(SPEC, FN_CALL), 8)
  })

  it("start_kong's nginx server block fixtures answer as http_mocks, rendered as Kong renders its template", async () => {
    allPass(await runSpec(BLOCK_SPEC, FN_CALL), 2)
  })

  it("answer a plugin's target with the location Lua: exact, prefix, regex with captures, default_type", async () => {
    allPass(await runSpec(TARGET_SPEC, AIM), 5)
  })

  it("answer a plugin's resty.http, request_uri or connect then request, and keep the request", async () => {
    allPass(await runSpec(CALL_SPEC, AIM), 3)
  })

  it("resolve a name start_kong's fixtures.dns_mock gives to a server block's port, for a service", async () => {
    allPass(await runSpec(NAMED_SPEC, AIM), 1)
  })

  it("hand a service's gzip body to plugins and the client byte for byte, and take bytes a plugin sets", async () => {
    allPass(await runSpec(GZIP_SPEC, REGZIP), 2)
  })

  it('pass a proxied body to body_filter as nginx does, its data and then an empty last chunk', async () => {
    allPass(await runSpec(LASTBUF_SPEC, LASTBUF), 2)
  })
})
