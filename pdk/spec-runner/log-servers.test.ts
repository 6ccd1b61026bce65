import { createSocket } from 'node:dgram'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { runSpecFile, type SpecResult } from './session.js'
import { badgeRoot } from './testing/badge.js'

// A logging plugin of our own, `wire-log`, in the shape of Kong's tcp-log and udp-log: its log phase
// hands a JSON line to a timer that sends it over ngx.socket.tcp (kept alive) or ngx.socket.udp. Its
// spec, in Kong's style, reads what arrived through spec.helpers' tcp_server / udp_server (servers.ts).
const WIRE_LOG = {
  'kong/plugins/wire-log/handler.lua': `
local cjson = require "cjson"
local WireLog = { PRIORITY = 7, VERSION = "1.0.0" }
local function send(premature, conf, line)
  local sock, ok, err
  if conf.udp then
    sock = ngx.socket.udp()
    ok, err = sock:setpeername(conf.host, conf.port)
  else
    sock = ngx.socket.tcp()
    sock:settimeout(1000)
    ok, err = sock:connect(conf.host, conf.port)
  end
  if not ok then return kong.log.err("could not connect: ", err) end
  ok, err = sock:send(line .. "\\r\\n")
  if not ok then return kong.log.err("could not send: ", err) end
  if conf.udp then sock:close() else sock:setkeepalive(60000) end
end
function WireLog:log(conf)
  local line = cjson.encode({ n = kong.request.get_header("x-n"), status = kong.response.get_status(), tag = conf.tag })
  ngx.timer.at(0, send, conf, line)
end
return WireLog`,
  'kong/plugins/wire-log/schema.lua': `
return { name = "wire-log", fields = { { config = { type = "record", fields = {
  { host = { type = "string", required = true } },
  { port = { type = "integer", required = true } },
  { udp = { type = "boolean", default = false } },
  { tag = { type = "string" } },
} } } } }`,
}

// `batch-log` hands its lines to kong.tools.queue, as http-log and datadog do; its handler fails its first try
const BATCH_LOG = {
  'kong/plugins/batch-log/handler.lua': `
local Queue = require "kong.tools.queue"
local BatchLog = { PRIORITY = 8, VERSION = "1.0.0" }
local tries = {}
local function send(conf, entries)
  tries[conf.port] = (tries[conf.port] or 0) + 1
  if conf.fail_first and tries[conf.port] == 1 then return nil, "collector down" end
  local sock = ngx.socket.udp()
  assert(sock:setpeername("127.0.0.1", conf.port))
  assert(sock:send(table.concat(entries, ",")))
  sock:close()
  return true
end
function BatchLog:log(conf)
  local params = Queue.get_plugin_params("batch-log", conf, "batch-" .. conf.port)
  local n = kong.request.get_header("x-n")
  -- x-count: that many entries from one request (zipkin queues three spans per request)
  local count = kong.request.get_header("x-count")
  if not count then return assert(Queue.enqueue(params, send, conf, n)) end
  for i = 1, tonumber(count) do assert(Queue.enqueue(params, send, conf, n .. i)) end
end
return BatchLog`,
  'kong/plugins/batch-log/schema.lua': `
local typedefs = require "kong.db.schema.typedefs"
return { name = "batch-log", fields = { { config = { type = "record", fields = {
  { port = { type = "integer", required = true } },
  { fail_first = { type = "boolean", default = false } },
  { queue = typedefs.queue },
} } } } }`,
}

const BATCH_SPEC = `
local helpers = require "spec.helpers"
local PORT, RETRY_PORT, FULL_PORT = helpers.get_available_port(), helpers.get_available_port(), helpers.get_available_port()
describe("Plugin: batch-log (log)", function()
  local proxy_client
  lazy_setup(function()
    local bp = helpers.get_db_utils("postgres", nil, { "batch-log" })
    local r = bp.routes:insert { hosts = { "batch.test" } }
    bp.plugins:insert { route = { id = r.id }, name = "batch-log",
      config = { port = PORT, queue = { max_batch_size = 2, max_coalescing_delay = 1 } } }
    local f = bp.routes:insert { hosts = { "retry.test" } }
    bp.plugins:insert { route = { id = f.id }, name = "batch-log",
      config = { port = RETRY_PORT, fail_first = true, queue = { max_batch_size = 1, initial_retry_delay = 0.1 } } }
    local full = bp.routes:insert { hosts = { "full.test" } }
    bp.plugins:insert { route = { id = full.id }, name = "batch-log",
      config = { port = FULL_PORT, queue = { max_batch_size = 2, max_coalescing_delay = 100 } } }
    assert(helpers.start_kong({ plugins = "bundled,batch-log" }))
    proxy_client = helpers.proxy_client()
  end)

  it("sends a full batch at once", function()
    local thread = helpers.udp_server(PORT)
    for _, n in ipairs({ "1", "2" }) do
      assert.response(proxy_client:get("/request", { headers = { host = "batch.test", ["x-n"] = n } })).has.status(200)
    end
    local ok, packet = thread:join()
    assert.True(ok)
    assert.equal("1,2", packet)
  end)

  it("sends a partial batch after max_coalescing_delay", function()
    local thread = helpers.udp_server(PORT, 1, 10)
    assert.response(proxy_client:get("/request", { headers = { host = "batch.test", ["x-n"] = "3" } })).has.status(200)
    local _, packet = thread:join()
    assert.equal("3", packet)
  end)

  it("entries past a full batch wait for the next one (max_coalescing_delay), not sent as a partial batch at once", function()
    local thread = helpers.udp_server(FULL_PORT, 2, 0.5)
    assert.response(proxy_client:get("/request", { headers = { host = "full.test", ["x-n"] = "f", ["x-count"] = "3" } }))
      .has.status(200)
    local _, packets, err = thread:join()
    assert.same({ "f1,f2" }, packets)
    assert.equal("timeout", err)
  end)

  it("retries a batch its handler failed", function()
    local thread = helpers.udp_server(RETRY_PORT)
    assert.response(proxy_client:get("/request", { headers = { host = "retry.test", ["x-n"] = "r" } })).has.status(200)
    local _, packet = thread:join()
    -- the first try failed (fail_first): what arrived is the retry's
    assert.equal("r", packet)
  end)
end)
`

// `post-log` sends each request's line from a timer with resty.http, as http-log does, to its config's URL
const POST_LOG = {
  'kong/plugins/post-log/handler.lua': `
local http = require "resty.http"
local cjson = require "cjson"
local PostLog = { PRIORITY = 6, VERSION = "1.0.0" }
local function send(premature, url, body, iterate, authorization)
  if iterate then
    -- a body of chunks, as http-log sends a batch
    local chunks, i = { "[", body, "]" }, 0
    body = function() i = i + 1 return chunks[i] end
  end
  local httpc = http.new()
  httpc:set_timeout(1000)
  local res, err = httpc:request_uri(url, { method = "POST", body = body,
    headers = { ["Content-Type"] = "application/json", ["X-Sender"] = "post-log", Authorization = authorization } })
  _G.post_log_result = res and res.status or err
end
function PostLog:log(conf)
  ngx.timer.at(0, send, conf.url, cjson.encode({ n = kong.request.get_header("x-n") }), kong.request.get_header("x-iter"),
    conf.authorization)
end
return PostLog`,
  'kong/plugins/post-log/schema.lua': `
return { name = "post-log", fields = { { config = { type = "record", fields = {
  { url = { type = "string", required = true } },
  { authorization = { type = "string" } },
} } } } }`,
}

const POST_SPEC = `
local helpers = require "spec.helpers"
local cjson = require "cjson"
describe("Plugin: post-log (log)", function()
  local proxy_client, mock
  lazy_setup(function()
    local bp = helpers.get_db_utils("postgres", nil, { "post-log" })
    local r = bp.routes:insert { hosts = { "post.test" } }
    bp.plugins:insert { route = { id = r.id }, name = "post-log", config = { url = helpers.mock_upstream_url .. "/post_log/mine" } }
    local far = bp.routes:insert { hosts = { "far.test" } }
    bp.plugins:insert { route = { id = far.id }, name = "post-log", config = { url = "http://collector.example.test:9880/x" } }
    local auth = bp.routes:insert { hosts = { "auth.test" } }
    bp.plugins:insert { route = { id = auth.id }, name = "post-log", config = {
      url = helpers.mock_upstream_url .. "/post_auth_log/auth/ann/pw", authorization = "Basic " .. ngx.encode_base64("ann:pw") } }
    local wrong = bp.routes:insert { hosts = { "wrong.test" } }
    bp.plugins:insert { route = { id = wrong.id }, name = "post-log", config = {
      url = helpers.mock_upstream_url .. "/post_auth_log/wrong/ann/pw", authorization = "Basic " .. ngx.encode_base64("ann:no") } }
    assert(helpers.start_kong({ plugins = "bundled,post-log" }))
    proxy_client = helpers.proxy_client()
    mock = helpers.http_client(helpers.mock_upstream_host, helpers.mock_upstream_port)
  end)

  it("the mock upstream keeps what the plugin posted; count_log and reset_log", function()
    assert.response(proxy_client:get("/request", { headers = { host = "post.test", ["x-n"] = "1" } })).has.status(200)
    assert.response(proxy_client:get("/request", { headers = { host = "post.test", ["x-n"] = "2", ["x-iter"] = "y" } }))
      .has.status(200)
    assert.equal(200, _G.post_log_result)
    local body = cjson.decode(assert.res_status(200, mock:get("/read_log/mine")))
    assert.equal(2, body.count)
    assert.equal("2", body.entries[2].n)
    assert.equal("post-log", body.entries[1].log_req_headers["x-sender"])
    assert.equal("2", assert.res_status(200, mock:get("/count_log/mine")))
    assert.res_status(200, mock:get("/reset_log/mine"))
    assert.same({}, cjson.decode(assert.res_status(200, mock:get("/read_log/mine"))).entries)
  end)

  it("/post_auth_log keeps what is posted with its user and password, refuses other credentials with 401", function()
    assert.response(proxy_client:get("/request", { headers = { host = "auth.test", ["x-n"] = "3" } })).has.status(200)
    assert.equal(200, _G.post_log_result)
    local body = cjson.decode(assert.res_status(200, mock:get("/read_log/auth")))
    assert.equal(1, body.count)
    assert.equal("3", body.entries[1].n)
    assert.equal("Basic YW5uOnB3", body.entries[1].log_req_headers.authorization)
    assert.response(proxy_client:get("/request", { headers = { host = "wrong.test" } })).has.status(200)
    assert.equal(401, _G.post_log_result)
    assert.same({}, cjson.decode(assert.res_status(200, mock:get("/read_log/wrong"))).entries)
  end)

  it("another server is not emulated: the plugin gets nil and an error naming it", function()
    assert.response(proxy_client:get("/request", { headers = { host = "far.test" } })).has.status(200)
    assert.matches("resty.http to collector.example.test:9880 is not emulated", _G.post_log_result, 1, true)
  end)
end)
`

const SPEC = `
local helpers = require "spec.helpers"
local cjson = require "cjson"
local TCP_PORT, UDP_PORT = helpers.get_available_port(), helpers.get_available_port()

for _, strategy in helpers.each_strategy() do
  describe("Plugin: wire-log (log) [#" .. strategy .. "]", function()
    local proxy_client
    lazy_setup(function()
      local bp = helpers.get_db_utils(strategy, { "routes", "services", "plugins" }, { "wire-log" })
      local tcp = bp.routes:insert { hosts = { "tcp.test" } }
      bp.plugins:insert { route = { id = tcp.id }, name = "wire-log", config = { host = "127.0.0.1", port = TCP_PORT } }
      local udp = bp.routes:insert { hosts = { "udp.test" } }
      bp.plugins:insert { route = { id = udp.id }, name = "wire-log",
        config = { host = "localhost", port = UDP_PORT, udp = true, tag = "u" } }
      assert(helpers.start_kong({ plugins = "bundled,wire-log" }))
      proxy_client = helpers.proxy_client()
    end)
    lazy_teardown(function()
      if proxy_client then proxy_client:close() end
      helpers.stop_kong()
    end)

    it("logs to TCP", function()
      local thread = helpers.tcp_server(TCP_PORT)
      local r = proxy_client:get("/request", { headers = { host = "tcp.test", ["x-n"] = "first" } })
      assert.response(r).has.status(200)
      local ok, res = thread:join()
      assert.True(ok)
      assert.same({ n = "first", status = 200 }, cjson.decode(res))
    end)

    it("logs to a new server on the same port (the kept connection was closed by the last one)", function()
      local thread = helpers.tcp_server(TCP_PORT, { prefix = "> " })
      assert.response(proxy_client:get("/request", { headers = { host = "tcp.test", ["x-n"] = "second" } })).has.status(200)
      local ok, res = thread:join()
      assert.True(ok)
      assert.equal("second", cjson.decode(res).n)
    end)

    it("counts the lines a server read until it is killed", function()
      local thread = helpers.tcp_server(TCP_PORT, { requests = 5, prefix = "got " })
      for _, line in ipairs({ "a", "b" }) do
        local sock = ngx.socket.tcp()
        assert(sock:connect("127.0.0.1", TCP_PORT))
        assert(sock:send(line .. "\\n"))
        assert.equal("got " .. line, sock:receive())
        sock:close()
      end
      local oks, fails = helpers.kill_tcp_server(TCP_PORT)
      assert.equal(2, oks)
      assert.equal(0, fails)
      local _, res = thread:join()
      assert.equal("b", res)
    end)

    it("answers timeout when nothing came in time", function()
      local thread = helpers.tcp_server(TCP_PORT, { timeout = 0.2 })
      local ok, res = thread:join()
      assert.True(ok)
      assert.equal("timeout", res)
    end)

    it("logs to UDP", function()
      local thread = helpers.udp_server(UDP_PORT)
      assert.response(proxy_client:get("/request", { headers = { host = "udp.test", ["x-n"] = "u" } })).has.status(200)
      local ok, res = thread:join()
      assert.True(ok)
      assert.same({ n = "u", status = 200, tag = "u" }, cjson.decode(res))
    end)

    it("gives a list of packets, and timeout when fewer came", function()
      local thread = helpers.udp_server(UDP_PORT, 3, 0.3)
      assert.response(proxy_client:get("/request", { headers = { host = "udp.test", ["x-n"] = "1" } })).has.status(200)
      assert.response(proxy_client:get("/request", { headers = { host = "udp.test", ["x-n"] = "2" } })).has.status(200)
      local ok, data, err = thread:join()
      assert.True(ok)
      assert.equal(2, #data)
      assert.equal("2", cjson.decode(data[2]).n)
      assert.equal("timeout", err)
    end)

    it("ngx.socket.udp reads what a server sends back", function()
      local echo = helpers.udp_server(UDP_PORT)
      local sock = ngx.socket.udp()
      assert(sock:setpeername("127.0.0.1", UDP_PORT))
      assert(sock:send({ "pi", "ng" }))
      local _, got = echo:join()
      assert.equal("ping", got)
      sock:settimeout(100)
      local data, err = sock:receive()
      assert.is_nil(data)
      assert.equal("timeout", err)
      assert(sock:close())
    end)
  end)
end
`

/** A spec file `spec/<name>_spec.lua` run in a plugin root with the given plugin's files. */
async function runIn(plugin: Record<string, string>, name: string, spec: string, timeoutMs = 10_000) {
  const shown = `spec/${name}_spec.lua`
  const root = badgeRoot({ ...plugin, [shown]: spec })
  return runSpecFile({ root, file: join(root, shown), shown, timeoutMs })
}
const run = (spec: string): Promise<SpecResult[]> => runIn(WIRE_LOG, 'wire-log', spec)
const failing = (rs: SpecResult[]) =>
  rs.filter((r) => r.status !== 'success').map((r) => `${r.status} ${r.name}: ${r.message ?? ''}`)

describe("a logging plugin's spec: spec.helpers' servers and ngx.socket.udp", () => {
  it('tcp_server and udp_server receive what the plugin sends, as Kong specs read it', async () => {
    const results = await run(SPEC)
    expect(failing(results)).toEqual([])
    expect(results.length).toBe(7)
  })

  it("kong.tools.queue hands the plugin's batches to its handler, retrying a failed one", async () => {
    const results = await runIn(BATCH_LOG, 'batch-log', BATCH_SPEC, 20_000)
    expect(failing(results)).toEqual([])
    expect(results.length).toBe(4)
  })

  it("resty.http from a plugin's timer reaches the mock upstream's /post_log and /post_auth_log, read back with /read_log", async () => {
    const results = await runIn(POST_LOG, 'post-log', POST_SPEC)
    expect(failing(results)).toEqual([])
    expect(results.length).toBe(3)
  })

  it('a port already taken is named', async () => {
    const taken = createSocket('udp4')
    await new Promise<void>((resolve) => taken.bind(0, '127.0.0.1', resolve))
    try {
      const results = await run(`
local helpers = require "spec.helpers"
describe("taken", function()
  it("fails naming the port", function()
    helpers.udp_server(${taken.address().port}, 1, 0.1)
  end)
end)`)
      expect(failing(results)).toEqual([
        expect.stringMatching(/spec\.helpers\.udp_server: udp_server on port \d+: address already in use/),
      ])
    } finally {
      taken.close()
    }
  })
})
