import { describe, expect, it } from 'vitest'
import { runSpec, outcomes, allPass } from './testing/specs.js'

// Details of Kong that Kong's own plugin specs lean on, each pinned by a tiny spec of ours in Kong's style
// (testing/badge.ts for the root): the router's captures, OpenResty modules a unit spec requires
const run = runSpec

describe("Kong's router matches", () => {
  it('uri_captures hold the whole match at 0, the groups from 1, the names (ngx.ctx.router_matches, kong.request)', async () => {
    const results = await run(
      `
local helpers = require "spec.helpers"
local cjson = require "cjson"
describe("captures", function()
  local proxy
  lazy_setup(function()
    local bp = helpers.get_db_utils("postgres", nil, { "captures" })
    local r1 = bp.routes:insert({ hosts = { "cap.test" }, paths = { [[~/user/(?P<user>\\w+)/(\\d+)]] } })
    bp.plugins:insert({ name = "captures", route = { id = r1.id } })
    local r2 = bp.routes:insert({ hosts = { "plain.test" }, paths = { "~/plain" } })
    bp.plugins:insert({ name = "captures", route = { id = r2.id } })
    assert(helpers.start_kong({ plugins = "bundled,captures" }))
    proxy = helpers.proxy_client()
  end)
  it("a regex path with groups", function()
    local r = assert(proxy:get("/user/ann/42/request", { headers = { host = "cap.test" } }))
    assert.res_status(200, r)
    assert.same({ ["#0"] = "/user/ann/42", ["#1"] = "ann", ["#2"] = "42", user = "ann" },
      cjson.decode(assert.response(r).has.header("x-captures")))
    -- kong.request.get_uri_captures() copies them: its unnamed ones start at 0 too, and encode as a JSON array
    -- of the groups (lua-cjson's array_mt)
    assert.equal("/user/ann/42,ann,42", assert.response(r).has.header("x-unnamed"))
    assert.same({ named = { user = "ann" }, unnamed = { "ann", "42" } },
      cjson.decode(assert.response(r).has.header("x-captures-json")))
  end)
  it("a regex path without groups has none, as Kong's router leaves them out", function()
    local r = assert(proxy:get("/plain/request", { headers = { host = "plain.test" } }))
    assert.res_status(200, r)
    assert.equal("none", assert.response(r).has.header("x-captures"))
  end)
end)`,
      {
        'kong/plugins/captures/handler.lua': `
local cjson = require "cjson"
local H = { PRIORITY = 900, VERSION = "1.0.0" }
function H:header_filter()
  local c = (ngx.ctx.router_matches or {}).uri_captures
  if not c then return kong.response.set_header("x-captures", "none") end
  local out = {}
  -- the positions are numbers, as ngx.re.match gives them
  for k, v in pairs(c) do out[type(k) == "number" and "#" .. k or k] = v end
  kong.response.set_header("x-captures", cjson.encode(out))
  kong.response.set_header("x-unnamed", table.concat(kong.request.get_uri_captures().unnamed, ",", 0))
  kong.response.set_header("x-captures-json", cjson.encode(kong.request.get_uri_captures()))
end
return H`,
        'kong/plugins/captures/schema.lua': `return { name = "captures", fields = { { config = { type = "record", fields = {} } } } }`,
      },
    )
    allPass(results, 2)
  })
})

describe('OpenResty modules a spec or plugin requires', () => {
  it('ngx.resp.add_header adds a value to the ones a response header has, each of a table', async () => {
    const results = await run(
      `
local helpers = require "spec.helpers"
describe("ngx.resp", function()
  local proxy
  lazy_setup(function()
    local bp = helpers.get_db_utils("postgres", nil, { "adder" })
    local r = bp.routes:insert({ hosts = { "add.test" } })
    bp.plugins:insert({ name = "adder", route = { id = r.id } })
    assert(helpers.start_kong({ plugins = "bundled,adder" }))
    proxy = helpers.proxy_client()
  end)
  it("add_header", function()
    local r = assert(proxy:get("/request", { headers = { host = "add.test" } }))
    assert.res_status(200, r)
    assert.same({ "a", "b" }, r.headers["x-one"])
    assert.same({ "c", "4" }, r.headers["x-two"])
  end)
end)`,
      {
        'kong/plugins/adder/handler.lua': `
local add_header = require("ngx.resp").add_header
local H = { PRIORITY = 900, VERSION = "1.0.0" }
function H:header_filter()
  ngx.header["x-one"] = "a"
  add_header("x-one", "b")
  add_header("x-two", { "c", 4 })
end
return H`,
        'kong/plugins/adder/schema.lua': `return { name = "adder", fields = { { config = { type = "record", fields = {} } } } }`,
      },
    )
    allPass(results, 1)
  })
})

describe("the database of Kong's specs", () => {
  it('has the default workspace; pgmoon.json makes the SQL literal; db.connector:query runs the SQL it reads, refuses the rest naming itself', async () => {
    const results = await run(`
local helpers = require "spec.helpers"
local pgmoon_json = require "pgmoon.json"
describe("database", function()
  local db
  lazy_setup(function()
    local _
    _, db = helpers.get_db_utils("postgres", { "plugins", "workspaces" })
  end)
  it("default workspace", function()
    local ws = assert(db.workspaces:select_by_name("default"))
    assert.is_uuid(ws.id)
  end)
  it("pgmoon.json", function()
    assert.equal([['{"it''s":true}']], pgmoon_json.encode_json({ ["it's"] = true }))
    assert.same({ a = 1 }, pgmoon_json.decode_json('{"a":1}'))
  end)
  it("SQL", function()
    assert(db.connector:query("INSERT INTO plugins (id) VALUES ('x');"))
    local res, err = db.connector:query("VACUUM plugins;")
    assert.is_nil(res)
    assert.matches("does not run this statement", err, 1, true)
  end)
end)`)
    expect(outcomes(results)).toEqual([
      'success database default workspace',
      'success database pgmoon.json',
      'success database SQL',
    ])
  })
})

describe("the Admin API's POST /config (DB-less)", () => {
  const SPEC = `
local helpers = require "spec.helpers"
local cjson = require "cjson"
describe("config", function()
  local admin, proxy
  lazy_setup(function()
    helpers.get_db_utils("off", nil, { "stamp" })
    assert(helpers.start_kong({ database = "off", plugins = "bundled,stamp" }))
    admin, proxy = helpers.admin_client(), helpers.proxy_client()
  end)
  local function post(body)
    local r = assert(admin:send { method = "POST", path = "/config", body = body,
      headers = { ["Content-Type"] = "application/json" } })
    return r.status, cjson.decode((r:read_body()))
  end
  it("a YAML configuration replaces the rows: nested routes and plugins, references by name", function()
    local status, body = post({ config = [[
      _format_version: "3.0"
      services:
      - name: echo
        url: http://127.0.0.1:15555
        routes:
        - name: r1
          hosts: [ yaml.test ]
          plugins:
          - name: stamp
            config: { value: from-yaml }
      consumers:
      - username: ann
      plugins:
      - name: stamp
        route: r1
        consumer: ann
        config:
          value: |-
            for ann
    ]] })
    assert.equal(201, status)
    local route_id = next(body.routes)
    assert.equal("r1", body.routes[route_id].name)
    local plugins = {}
    for _, p in pairs(body.plugins) do plugins[p.config.value] = p end
    assert.same({ id = route_id }, plugins["from-yaml"].route)
    assert.equal(next(body.consumers), plugins["for ann"].consumer.id)
    local r = assert(proxy:get("/request", { headers = { host = "yaml.test" } }))
    assert.equal("from-yaml", cjson.decode(assert.res_status(200, r)).headers["x-stamp"])
  end)
  it("a refused entity refuses the whole configuration, naming where; the rows stay", function()
    local status, body = post({ _format_version = "3.0", plugins = { { name = "stamp", config = { count = 1 } } } })
    assert.equal(400, status)
    assert.equal("invalid declarative configuration", body.name)
    assert.same({ plugins = { { config = { value = "required field missing" } } } }, body.fields)
    local r = assert(proxy:get("/request", { headers = { host = "yaml.test" } }))
    assert.res_status(200, r)
  end)
  it("_format_version is a string Kong knows", function()
    local status, body = post({ config = "_format_version: 3.0" })
    assert.equal(400, status)
    assert.same({ _format_version = "expected a string" }, body.fields)
    status, body = post({ _format_version = "0.1" })
    assert.equal(400, status)
    assert.same({ _format_version = "expected one of: 1.1, 2.1, 3.0" }, body.fields)
  end)
  it("YAML it cannot read is a 400 naming the line", function()
    local status, body = post({ config = "_format_version: '3.0'\\nservices: [a, b" })
    assert.equal(400, status)
    assert.equal("failed parsing declarative configuration: line 2: a flow collection spanning lines is not read by broker", body.message)
  end)
end)`

  it('loads a configuration in place of every row; a refused one changes nothing', async () => {
    allPass(await run(SPEC), 4)
  })

  it('answers 400 when Kong runs with a database, as Kong does', async () => {
    const results = await run(`
local helpers = require "spec.helpers"
local cjson = require "cjson"
describe("config", function()
  it("with a database", function()
    helpers.get_db_utils("postgres")
    assert(helpers.start_kong({ database = "postgres" }))
    local r = helpers.admin_client():post("/config", { body = { _format_version = "3.0" },
      headers = { ["Content-Type"] = "application/json" } })
    assert.same({ message = "this endpoint is only available when Kong is configured to not use a database" },
      cjson.decode(assert.res_status(400, r)))
  end)
end)`)
    allPass(results, 1)
  })
})

describe('the YAML of declarative configurations', () => {
  it('reads block and flow collections and every scalar style; refuses what it does not read, naming the line', async () => {
    const results = await run(`
local yaml = require "broker.spec.yaml"
local null = require("cjson").null
describe("yaml", function()
  it("reads", function()
    assert.same({ a = { 1, 2.5, true, null, "x y" }, b = { c = "it's", d = "t\\té" }, e = { { f = 1, g = { h = "i" } } },
      lit = "one\\ntwo\\n", fold = "one two\\nthree", strip = "s", flow = { k = { "v", "w" } }, url = "http://h:80/p" },
      assert(yaml.decode([[
        # a comment
        "a":
          - 1
          - 2.5
          - true
          - ~
          - x y   # trailing comment
        b: { c: 'it''s', d: "t\\t\\u00e9" }
        e:
        - f: 1
          g:
            h: i
        lit: |
          one
          two
        fold: >-
          one
          two

          three
        strip: |-
          s
        flow: { k: [v, w] }
        url: http://h:80/p
      ]])))
  end)
  it("refuses", function()
    assert.same({ nil, "line 1: anchors, aliases and tags are not read by broker" }, { yaml.decode("a: &x 1") })
    assert.same({ nil, "line 2: unexpected indentation" }, { yaml.decode("a: 1\\n  b: 2") })
    assert.same({ nil, "line 2: several documents are not read by broker" }, { yaml.decode("a: 1\\n---\\nb: 2") })
    assert.same({ nil, "line 1: a quoted scalar is not closed on its line (one spanning lines is not read by broker)" },
      { yaml.decode("a: 'x") })
  end)
end)`)
    allPass(results, 2)
  })
})

describe('ngx.thread in a spec', () => {
  it("runs a spec's thread to its end at spawn, its requests through Kong in process; wait gives its results", async () => {
    const results = await run(`
local helpers = require "spec.helpers"
local cjson = require "cjson"
describe("threads", function()
  lazy_setup(function()
    local bp = helpers.get_db_utils("postgres", nil, { "stamp" })
    local r = bp.routes:insert({ hosts = { "t.test" } })
    bp.plugins:insert({ name = "stamp", route = { id = r.id }, config = { value = "v" } })
    assert(helpers.start_kong({ plugins = "bundled,stamp" }))
  end)
  it("spawn, wait", function()
    local order = {}
    local function fetch(name)
      return function(extra)
        local r = assert(helpers.proxy_client():get("/request", { headers = { host = "t.test", ["x-stamp"] = name } }))
        order[#order + 1] = name
        return cjson.decode(assert.res_status(200, r)).headers["x-stamp"], extra
      end
    end
    local t1 = ngx.thread.spawn(fetch("one"), "more")
    local t2 = ngx.thread.spawn(fetch("two"))
    local t3 = ngx.thread.spawn(function() error("boom") end)
    assert.same({ true, "one,v", "more" }, { ngx.thread.wait(t1) })
    assert.same({ true, "two,v" }, { ngx.thread.wait(t2) })
    local ok, err = ngx.thread.wait(t3)
    assert.is_false(ok)
    assert.matches("boom", err)
    assert.same({ nil, "already waited or killed" }, { ngx.thread.wait(t1) })
    assert.same({ "one", "two" }, order)
  end)
end)`)
    allPass(results, 1)
  })

  it("a plugin's own ngx.thread still raises naming it", async () => {
    const results = await run(
      `
local helpers = require "spec.helpers"
describe("threads", function()
  it("in a plugin", function()
    local bp = helpers.get_db_utils("postgres", nil, { "spawner" })
    local r = bp.routes:insert({ hosts = { "s.test" } })
    bp.plugins:insert({ name = "spawner", route = { id = r.id } })
    assert(helpers.start_kong({ plugins = "bundled,spawner" }))
    assert.res_status(500, helpers.proxy_client():get("/request", { headers = { host = "s.test" } }))
    assert.logfile().has.line("ngx.thread is not emulated by broker", true)
  end)
end)`,
      {
        'kong/plugins/spawner/handler.lua': `
return { PRIORITY = 1, VERSION = "1", access = function() ngx.thread.spawn(function() end) end }`,
        'kong/plugins/spawner/schema.lua': `return { name = "spawner", fields = { { config = { type = "record", fields = {} } } } }`,
      },
    )
    allPass(results, 1)
  })
})

describe('kong.log.trace and the queue log lines', () => {
  it("write at debug level while a spec runs, and the queue's lines name the plugin's instance", async () => {
    const results = await run(
      `
local helpers = require "spec.helpers"
describe("trace", function()
  it("in a plugin", function()
    local bp = helpers.get_db_utils("postgres", nil, { "tracer" })
    local r = bp.routes:insert({ hosts = { "t.test" } })
    local p = bp.plugins:insert({ name = "tracer", instance_name = "my-tracer", route = { id = r.id } })
    assert(helpers.start_kong({ plugins = "bundled,tracer" }))
    assert.res_status(200, helpers.proxy_client():get("/request", { headers = { host = "t.test" } }))
    assert.logfile().has.line([[\\[debug\\] .* traced from access]])
    assert.logfile().has.line("[tracer plugin " .. p.id .. " (my-tracer)] queue tq: queue created", true)
    -- what the queue's timer and the plugin's own timer log is in error.log too
    assert.logfile().has.line("queue tq: done processing queue", true)
    -- an entry sent without a queue (concurrency_limit -1) is handled, and no queue is processed
    assert.logfile().has.line("queue nq: handler processed 1 entries successfully", true)
    assert.logfile().has_not.line("queue nq: done processing queue", true)
    assert.logfile().has.line("short: nil timeout", true)
    assert.logfile().has.line("long: 200 nil", true)
  end)
end)`,
      {
        'kong/plugins/tracer/handler.lua': `
local Queue = require "kong.tools.queue"
return { PRIORITY = 1, VERSION = "1",
  access = function() kong.log.trace("traced from access") end,
  log = function(self, conf)
    local params = Queue.get_plugin_params("tracer", conf, "tq")
    assert(Queue.enqueue(params, function() return true end, nil, "entry"))
    local unqueued = Queue.get_plugin_params("tracer", conf, "nq")
    unqueued.concurrency_limit = -1
    assert(Queue.enqueue(unqueued, function() return true end, nil, "entry"))
    -- the mock upstream's /delay/1 answers after a second: past a client's timeout it is lua-resty-http's "timeout"
    ngx.timer.at(0, function()
      local function get(ms)
        local httpc = require("resty.http").new()
        httpc:set_timeout(ms)
        local res, err = httpc:request_uri("http://127.0.0.1:15555/delay/1")
        return res and res.status, err
      end
      kong.log.err("short: ", tostring((get(500))), " ", tostring(select(2, get(500))))
      kong.log.err("long: ", tostring((get(2000))), " ", tostring(select(2, get(2000))))
    end)
  end }`,
        'kong/plugins/tracer/schema.lua': `
local typedefs = require "kong.db.schema.typedefs"
return { name = "tracer", fields = { { config = { type = "record", fields = { { queue = typedefs.queue } } } } } }`,
      },
    )
    allPass(results, 1)
  })
})

describe("a plugin's resty.http from inside a phase", () => {
  it('reaches the mock upstream, and its response headers are one field per name in any case', async () => {
    const results = await run(
      `
local helpers = require "spec.helpers"
describe("fetch", function()
  lazy_setup(function()
    local bp = helpers.get_db_utils("postgres", nil, { "fetcher" })
    local route = bp.routes:insert({ hosts = { "fetch.test" } })
    bp.plugins:insert({ name = "fetcher", route = { id = route.id } })
    assert(helpers.start_kong({ plugins = "bundled,fetcher" }))
  end)
  lazy_teardown(function() helpers.stop_kong() end)
  it("answers with what the mock upstream said", function()
    local r = helpers.proxy_client():get("/", { headers = { host = "fetch.test" } })
    local body = assert.res_status(203, r)
    assert.equal("/anything", require("cjson").decode(body).vars.uri)
    assert.equal("text/x-fetched", r.headers["content-type"])
  end)
end)`,
      {
        'kong/plugins/fetcher/handler.lua': `
local http = require "resty.http"
return { PRIORITY = 1000, VERSION = "1.0.0", access = function()
  local httpc = http.new()
  assert(httpc:connect({ scheme = "http", host = "127.0.0.1", port = 15555 }))
  local res, err = httpc:request({ method = "GET", path = "/anything" })
  if not res then return kong.response.exit(500, { message = err }) end
  local body = res:read_body()
  res.headers["content-length"] = nil
  res.headers["content-type"] = "text/x-fetched"
  return kong.response.exit(203, body, res.headers)
end }`,
        'kong/plugins/fetcher/schema.lua':
          'return { name = "fetcher", fields = { { config = { type = "record", fields = {} } } } }',
      },
    )
    allPass(results, 1)
  })
})
