import { describe, it } from 'vitest'
import { allPass, runSpec } from './testing/specs.js'

// A request no route matches: Kong's router answers 404 as the access phase begins, and the global plugins
// (no route, service or consumer) still run their rewrite before it and header_filter, body_filter and log
// after it; no plugin's access runs. `tally` notes each phase it runs in, by its config's tag, in a global the
// spec reads (the plugin and the spec share one Lua state); its log phase keeps what kong.log.serialize gave.
const TALLY = {
  'kong/plugins/tally/handler.lua': `
local Tally = { PRIORITY = 11, VERSION = "1.0.0" }
local function note(conf, phase)
  _G.tally = _G.tally or {}
  table.insert(_G.tally, conf.tag .. ":" .. phase)
end
function Tally:rewrite(conf) note(conf, "rewrite") end
function Tally:access(conf) note(conf, "access") end
function Tally:header_filter(conf)
  note(conf, "header_filter")
  kong.response.set_header("x-tally", conf.tag)
end
function Tally:body_filter(conf) if ngx.arg[2] then note(conf, "body_filter") end end
function Tally:log(conf)
  note(conf, "log")
  _G.tally_entry = kong.log.serialize()
  _G.tally_route = kong.router.get_route() or "none"
  _G.tally_source = kong.response.get_source()
end
return Tally`,
  'kong/plugins/tally/schema.lua': `
return { name = "tally", fields = { { config = { type = "record", fields = {
  { tag = { type = "string", required = true } },
} } } } }`,
}

const SPEC = `
local helpers = require "spec.helpers"
local cjson = require "cjson"
describe("tally enabled globally", function()
  local proxy_client
  lazy_setup(function()
    local bp = helpers.get_db_utils("postgres", { "routes", "services", "plugins", "consumers" }, { "tally" })
    local route = bp.routes:insert { hosts = { "tally.test" } }
    local consumer = bp.consumers:insert { username = "ann" }
    bp.plugins:insert { name = "tally", config = { tag = "global" } }
    bp.plugins:insert { name = "tally", route = { id = route.id }, config = { tag = "route" } }
    bp.plugins:insert { name = "tally", consumer = { id = consumer.id }, config = { tag = "consumer" } }
    assert(helpers.start_kong({ plugins = "bundled,tally" }))
  end)
  before_each(function()
    _G.tally, _G.tally_entry = nil, nil
    proxy_client = helpers.proxy_client()
  end)
  after_each(function() proxy_client:close() end)

  it("a request no route matches: Kong's 404, the global instance's rewrite, header_filter, body_filter, log", function()
    local res = proxy_client:get("/nowhere", { headers = { host = "nowhere.test" } })
    local body = cjson.decode(assert.res_status(404, res))
    assert.equal("no Route matched with those values", body.message)
    assert.is_string(body.request_id)
    assert.equal("global", res.headers["x-tally"])
    assert.same({ "global:rewrite", "global:header_filter", "global:body_filter", "global:log" }, _G.tally)
  end)

  it("its log entry has no route and no service, as Kong fills it", function()
    assert.res_status(404, proxy_client:get("/nowhere?a=1", { headers = { host = "nowhere.test" } }))
    local e = _G.tally_entry
    assert.is_nil(e.route)
    assert.is_nil(e.service)
    assert.is_nil(e.tries)
    assert.equal("", e.upstream_uri)
    assert.equal(404, e.response.status)
    assert.equal("127.0.0.1", e.client_ip)
    assert.equal("/nowhere?a=1", e.request.uri)
    assert.equal(-1, e.latencies.proxy)
    assert.equal("none", _G.tally_route)
    assert.equal("exit", _G.tally_source)
  end)

  it("a request a route matches runs the route's instance in place of the global one", function()
    assert.res_status(200, proxy_client:get("/request", { headers = { host = "tally.test" } }))
    assert.same({ "global:rewrite", "route:access", "route:header_filter", "route:body_filter", "route:log" }, _G.tally)
  end)
end)
`

describe('a request no route matches, through Kong in process', () => {
  it('runs the global plugins as Kong does: rewrite before the 404, header_filter, body_filter and log after', async () => {
    allPass(await runSpec(SPEC, TALLY), 3)
  })

  it("a route with no service: Kong's 503 once access ran, unless a plugin answered; the log has no service", async () => {
    const results = await runSpec(
      `
local helpers = require "spec.helpers"
local cjson = require "cjson"
describe("a serviceless route", function()
  local proxy_client
  lazy_setup(function()
    local bp = helpers.get_db_utils("postgres", { "routes", "services", "plugins" }, { "tally", "answer" })
    local bare = bp.routes:insert { paths = { "/bare" }, no_service = true }
    local answered = bp.routes:insert { paths = { "/answered" }, no_service = true }
    assert.is_nil(bare.service)
    assert.is_nil(bare.no_service)
    bp.plugins:insert { name = "tally", route = { id = bare.id }, config = { tag = "bare" } }
    bp.plugins:insert { name = "tally", route = { id = answered.id }, config = { tag = "answered" } }
    bp.plugins:insert { name = "answer", route = { id = answered.id } }
    assert(helpers.start_kong({ plugins = "bundled,tally,answer" }))
    proxy_client = helpers.proxy_client()
  end)
  before_each(function() _G.tally = {} end)
  it("no plugin answers: 503 after its access phase (a route's plugin has no rewrite), then the later phases", function()
    local body = assert.res_status(503, proxy_client:get("/bare"))
    assert.equal("no Service found with those values", cjson.decode(body).message)
    assert.same({ "bare:access", "bare:header_filter", "bare:body_filter", "bare:log" }, _G.tally)
    assert.is_nil(_G.tally_entry.service)
    assert.equal("/bare", _G.tally_entry.route.paths[1])
  end)
  it("a plugin answers in access: its answer, and no service in the log", function()
    local body = assert.res_status(200, proxy_client:get("/answered"))
    assert.equal("OK", cjson.decode(body).message)
    assert.is_nil(_G.tally_entry.service)
  end)
end)`,
      {
        ...TALLY,
        // `answer` ends every request in access, as request-termination does
        'kong/plugins/answer/handler.lua': `
return { PRIORITY = 2, VERSION = "1.0.0", access = function() return kong.response.exit(200, { message = "OK" }) end }`,
        'kong/plugins/answer/schema.lua': `
return { name = "answer", fields = { { config = { type = "record", fields = {} } } } }`,
      },
    )
    allPass(results, 2)
  })
})
