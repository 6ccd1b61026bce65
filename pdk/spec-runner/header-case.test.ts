import { describe, it } from 'vitest'
import { allPass, runSpec } from './testing/specs.js'

// ngx.req.get_headers and ngx.resp.get_headers with `raw`: names as they were given, not lower-cased, and a
// plain table (OpenResty's). proxy-cache keeps the response's headers that way and removes its own
// `X-Cache-Status` by that exact name before answering from the cache; a header a plugin set before proxying
// keeps its name through the service's answer.
const CASE = {
  'kong/plugins/case/handler.lua': `
local Case = { PRIORITY = 5, VERSION = "1.0.0" }
local function names(t)
  local out = {}
  for k in pairs(t) do out[#out + 1] = k end
  table.sort(out)
  return table.concat(out, ",")
end
function Case:access()
  kong.response.set_header("X-Set-In-Access", "a")
  kong.ctx.plugin.req_raw = names(ngx.req.get_headers(0, true))
  kong.ctx.plugin.req = names(ngx.req.get_headers())
end
function Case:header_filter()
  local raw = ngx.resp.get_headers(0, true)
  kong.response.set_header("x-resp-raw", names(raw))
  kong.response.set_header("x-resp", names(ngx.resp.get_headers()))
  kong.response.set_header("x-raw-lookup", tostring(raw["x-set-in-access"]) .. "/" .. tostring(raw["X-Set-In-Access"]))
  kong.response.set_header("x-req-raw", kong.ctx.plugin.req_raw)
  kong.response.set_header("x-req", kong.ctx.plugin.req)
end
return Case`,
  'kong/plugins/case/schema.lua': `
return { name = "case", fields = { { config = { type = "record", fields = {} } } } }`,
}

describe('header names with raw, through Kong in process', () => {
  it("keep the case they were given, also across the service's answer", async () => {
    const results = await runSpec(
      `
local helpers = require "spec.helpers"
describe("case", function()
  it("raw names", function()
    local bp = helpers.get_db_utils("postgres", { "routes", "services", "plugins" }, { "case" })
    local r = bp.routes:insert { hosts = { "case.test" } }
    bp.plugins:insert { name = "case", route = { id = r.id } }
    assert(helpers.start_kong({ plugins = "bundled,case" }))
    local client = helpers.proxy_client()
    local res = client:get("/get", { headers = { host = "case.test", ["X-Client-Case"] = "c" } })
    assert.res_status(200, res)
    assert.matches("X-Set-In-Access", res.headers["x-resp-raw"], 1, true)
    assert.matches("Content-Type", res.headers["x-resp-raw"], 1, true)
    assert.matches("x-set-in-access", res.headers["x-resp"], 1, true)
    assert.is_nil(res.headers["x-resp"]:find("X-Set-In-Access", 1, true))
    assert.equal("nil/a", res.headers["x-raw-lookup"])
    assert.matches("X-Client-Case", res.headers["x-req-raw"], 1, true)
    assert.matches("x-client-case", res.headers["x-req"], 1, true)
  end)
end)`,
      CASE,
    )
    allPass(results, 1)
  })

  it('a plugin that sets ngx.ctx.KONG_PROXIED and answers gets the headers of a proxied answer, as a cache hit does', async () => {
    const results = await runSpec(
      `
local helpers = require "spec.helpers"
describe("cached", function()
  it("answers as proxied", function()
    local bp = helpers.get_db_utils("postgres", { "routes", "services", "plugins" }, { "cached" })
    local r = bp.routes:insert { hosts = { "cached.test" } }
    bp.plugins:insert { name = "cached", route = { id = r.id } }
    local plain = bp.routes:insert { hosts = { "plain.test" } }
    bp.plugins:insert { name = "cached", route = { id = plain.id }, config = { mark = false } }
    assert(helpers.start_kong({ plugins = "bundled,cached" }))
    local client = helpers.proxy_client()
    local res = client:get("/", { headers = { host = "cached.test" } })
    assert.equal("true", assert.res_status(200, res))
    assert.matches("^%d+$", res.headers["X-Kong-Proxy-Latency"])
    assert.matches("^%d+$", res.headers["X-Kong-Upstream-Latency"])
    assert.is_nil(res.headers["X-Kong-Response-Latency"])
    res = client:get("/", { headers = { host = "plain.test" } })
    assert.equal("nil", assert.res_status(200, res))
    assert.matches("^%d+$", res.headers["X-Kong-Response-Latency"])
    assert.is_nil(res.headers["X-Kong-Proxy-Latency"])
  end)
end)`,
      {
        'kong/plugins/cached/handler.lua': `
return { PRIORITY = 5, VERSION = "1.0.0", access = function(_, conf)
  if conf.mark then ngx.ctx.KONG_PROXIED = true end
  return kong.response.exit(200, tostring(ngx.ctx.KONG_PROXIED))
end }`,
        'kong/plugins/cached/schema.lua': `
return { name = "cached", fields = { { config = { type = "record", fields = {
  { mark = { type = "boolean", default = true } },
} } } } }`,
      },
    )
    allPass(results, 1)
  })

  it('ngx.header names have their underscores as hyphens, as nginx transforms them by default', async () => {
    const results = await runSpec(
      `
local helpers = require "spec.helpers"
describe("under", function()
  it("hyphens", function()
    local bp = helpers.get_db_utils("postgres", { "routes", "services", "plugins" }, { "under" })
    local r = bp.routes:insert { hosts = { "under.test" } }
    bp.plugins:insert { name = "under", route = { id = r.id } }
    assert(helpers.start_kong({ plugins = "bundled,under" }))
    local res = helpers.proxy_client():get("/", { headers = { host = "under.test" } })
    assert.res_status(200, res)
    assert.equal("a", res.headers["x-set-as-under"])
    assert.equal("a", res.headers["x-read-back"])
    assert.is_nil(res.headers["x_set_as_under"])
  end)
end)`,
      {
        'kong/plugins/under/handler.lua': `
return { PRIORITY = 5, VERSION = "1.0.0", header_filter = function()
  ngx.header.x_set_as_under = "a"
  ngx.header["x-read-back"] = ngx.header["X_Set_As_Under"]
end }`,
        'kong/plugins/under/schema.lua': `
return { name = "under", fields = { { config = { type = "record", fields = {} } } } }`,
      },
    )
    allPass(results, 1)
  })
})
