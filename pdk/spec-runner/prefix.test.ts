import { describe, expect, it } from 'vitest'
import { allPass, outcomes, runSpec } from './testing/specs.js'

// What Kong's statsd spec leans on, in a spec of ours: Kong's shared dictionaries in ngx.shared, the prefix's
// nginx configuration that declares them, a plugin's module state that a restart starts over, and the
// default workspace's id where a timer's context names none.

// `tally` checks it loads in the init phase, counts its log phases at module level and reports the count, the shared dictionaries it sees
// and the workspace id in a response header of the next request.
const TALLY = {
  'kong/plugins/tally/handler.lua': `
local workspaces = require "kong.workspaces"
-- Kong loads a plugin's files in nginx's init phase, a restarted Kong too (prometheus starts its counters here)
assert(ngx.get_phase() == "init", "tally loaded in the " .. ngx.get_phase() .. " phase")
local Tally = { PRIORITY = 5, VERSION = "1.0.0" }
local logged = 0
function Tally:header_filter()
  local dicts = 0
  for _ in pairs(ngx.shared) do dicts = dicts + 1 end
  kong.response.set_header("x-tally", logged .. "/" .. dicts .. "/" .. tostring(workspaces.get_workspace_id()))
end
function Tally:log() logged = logged + 1 end
return Tally`,
  'kong/plugins/tally/schema.lua': `
return { name = "tally", fields = { { config = { type = "record", fields = {} } } } }`,
}

describe('the Kong in process of broker pdk test, as a statsd-like spec sees it', () => {
  it("reads servroot/nginx.conf and its includes, whose lua_shared_dict lines are ngx.shared's dictionaries", async () => {
    const results = await runSpec(`
local helpers = require "spec.helpers"
local function count(file)
  local text = assert(helpers.utils.readfile(helpers.test_conf.prefix .. "/" .. file))
  local n = 0
  for _ in text:gmatch("%s*lua_shared_dict%s+(.-)[%s;\\n]") do n = n + 1 end
  for inc in text:gmatch("%s*include%s+'(.-%.conf)'[;\\n]") do n = n + count(inc) end
  return n
end
describe("prefix", function()
  it("declares what ngx.shared holds", function()
    assert(helpers.start_kong())
    local names = {}
    for name in pairs(ngx.shared) do names[#names + 1] = name end
    assert.equal(#names, count("nginx.conf"))
    assert.is_true(#names >= 10)
    assert.equal(5 * 1024 * 1024, ngx.shared.kong:capacity())
    assert.equal(8 * 1024 * 1024, ngx.shared.kong_locks:capacity())
    assert.matches("lua_shared_dict kong_db_cache%s+131072k;", helpers.utils.readfile("servroot/nginx-kong.conf"))
  end)
  it("a free_space shrinks as a dictionary fills", function()
    local before = ngx.shared.kong:free_space()
    for i = 1, 200 do ngx.shared.kong:set("k" .. i, string.rep("x", 100)) end
    assert.is_true(ngx.shared.kong:free_space() < before)
  end)
end)`)
    allPass(results, 2)
  })

  it('a restarted Kong loads its plugins afresh, and a request reports the default workspace id', async () => {
    const results = await runSpec(
      `
local helpers = require "spec.helpers"
describe("tally", function()
  local ws
  lazy_setup(function()
    local bp = helpers.get_db_utils("postgres", { "routes", "services", "plugins" }, { "tally" })
    bp.plugins:insert({ name = "tally" })
    bp.routes:insert({ hosts = { "tally.test" } })
    ws = helpers.db.workspaces:select_by_name("default")
    assert(helpers.start_kong({ plugins = "bundled,tally" }))
  end)
  local function tally()
    local client = helpers.proxy_client()
    local res = client:get("/", { headers = { host = "tally.test" } })
    client:close()
    return res.headers["x-tally"]
  end
  it("counts across requests, then from zero after a restart", function()
    tally()
    local seen = tally()
    assert.matches("^1/", seen)
    assert(helpers.restart_kong({ plugins = "bundled,tally" }))
    assert.matches("^0/", tally())
  end)
  it("names the default workspace", function()
    assert.is_table(ws)
    assert.equal("/" .. ws.id, tally():match("/[^/]+$"))
  end)
end)`,
      TALLY,
    )
    expect(outcomes(results)).toEqual([
      'success tally counts across requests, then from zero after a restart',
      'success tally names the default workspace',
    ])
  })

  it("Kong's constants and tools are loaded before a spec runs, as Kong's helpers load them", async () => {
    const results = await runSpec(
      `
require "spec.helpers"
describe("a spec that stubs ngx", function()
  it("still finds Kong's constants loaded with the real one", function()
    local real = _G.ngx
    _G.ngx = { get_phase = function() return "log" end }
    local ok, constants = pcall(require, "kong.constants")
    _G.ngx = real
    assert(ok, constants)
    assert.equal(real.DEBUG, constants.LEVEL)
  end)
end)`,
      // a checkout's kong/constants.lua reads ngx's log levels when it loads, as Kong's does
      { 'kong/constants.lua': 'return { LEVEL = assert(ngx.DEBUG, "ngx.DEBUG") }' },
    )
    allPass(results, 1)
  })
})
