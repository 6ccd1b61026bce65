import { describe, it } from 'vitest'
import { allPass, runSpec } from './testing/specs.js'

// A Kong started again is a new process in Kong's own test suite: every module of Kong's or the plugin's code
// its workers loaded starts over, not only kong.plugins.* (Kong's AI plugins register their filters' namespaces
// in kong.llm.plugin.ctx, which refuses a second registration).
const FILES = {
  'shared/registry.lua': `
local M, names = {}, {}
function M.register(name)
  if names[name] then error("already registered: " .. name, 2) end
  names[name] = true
  return name
end
M.count = 0
return M`,
  'kong/plugins/reg/handler.lua': `
local registry = require "shared.registry"
local NAME = registry.register("reg")
local Reg = { PRIORITY = 5, VERSION = "1.0.0" }
function Reg:access()
  registry.count = registry.count + 1
  kong.response.set_header("x-reg", NAME .. " " .. registry.count)
end
return Reg`,
  'kong/plugins/reg/schema.lua': `
return { name = "reg", fields = { { config = { type = "record", fields = {} } } } }`,
}

describe('start_kong again, in one spec file', () => {
  it("loads afresh the modules of the plugin's code its first Kong loaded, outside kong.plugins too", async () => {
    const results = await runSpec(
      `
local helpers = require "spec.helpers"
for _, strategy in ipairs({ "postgres", "off" }) do
  describe("reg #" .. strategy, function()
    lazy_setup(function()
      local bp = helpers.get_db_utils(strategy, { "routes", "services", "plugins" }, { "reg" })
      local r = bp.routes:insert { hosts = { "reg.test" } }
      bp.plugins:insert { name = "reg", route = { id = r.id } }
      assert(helpers.start_kong({ database = strategy, plugins = "bundled,reg" }))
    end)
    lazy_teardown(function() helpers.stop_kong() end)
    it("registers once per Kong", function()
      local res = helpers.proxy_client():get("/", { headers = { host = "reg.test" } })
      assert.res_status(200, res)
      assert.equal("reg 1", res.headers["x-reg"])
    end)
  end)
end`,
      FILES,
    )
    allPass(results, 2)
  })

  it('gives the first Kong its own copy of a module the spec loaded, reading the environment helpers.setenv set', async () => {
    const results = await runSpec(
      `
local helpers = require "spec.helpers"
local mine = require "shared.port"
describe("env", function()
  lazy_setup(function()
    helpers.setenv("PORT_UNDER_TEST", "4242")
    local bp = helpers.get_db_utils("postgres", { "routes", "services", "plugins" }, { "port" })
    local r = bp.routes:insert { hosts = { "port.test" } }
    bp.plugins:insert { name = "port", route = { id = r.id } }
    assert(helpers.start_kong({ plugins = "bundled,port" }))
  end)
  lazy_teardown(function() helpers.stop_kong() helpers.unsetenv("PORT_UNDER_TEST") end)
  it("reads it", function()
    assert.is_nil(mine.port)
    local res = helpers.proxy_client():get("/", { headers = { host = "port.test" } })
    assert.res_status(200, res)
    assert.equal("4242", res.headers["x-port"])
  end)
end)`,
      {
        'shared/port.lua': 'return { port = os.getenv("PORT_UNDER_TEST") }',
        'kong/plugins/port/handler.lua': `
local port = require("shared.port").port
return { PRIORITY = 5, VERSION = "1.0.0", access = function()
  kong.response.set_header("x-port", tostring(port))
end }`,
        'kong/plugins/port/schema.lua': `
return { name = "port", fields = { { config = { type = "record", fields = {} } } } }`,
      },
    )
    allPass(results, 1)
  })

  it("sets the untrusted Lua settings before the plugins load, so a module that reads them on load sees this start's", async () => {
    const files = {
      'kong/plugins/mode/handler.lua': `
-- read once, when the module loads (as Kong's sandbox reads its configuration)
local MODE = kong.configuration.untrusted_lua
local Mode = { PRIORITY = 5, VERSION = "1.0.0" }
function Mode:access() return kong.response.exit(200, { mode = MODE }) end
return Mode`,
      'kong/plugins/mode/schema.lua': `
return { name = "mode", fields = { { config = { type = "record", fields = {} } } } }`,
    }
    const results = await runSpec(
      `
local helpers = require "spec.helpers"
local cjson = require "cjson"
describe("mode", function()
  local bp
  lazy_setup(function()
    bp = helpers.get_db_utils("postgres", nil, { "mode" })
    local r = bp.routes:insert { hosts = { "mode.test" } }
    bp.plugins:insert { name = "mode", route = { id = r.id } }
  end)
  after_each(function() helpers.stop_kong() end)
  for _, mode in ipairs({ "on", "off", "sandbox" }) do
    it("untrusted_lua = " .. mode, function()
      assert(helpers.start_kong({ plugins = "bundled,mode", untrusted_lua = mode }))
      local res = helpers.proxy_client():get("/", { headers = { host = "mode.test" } })
      assert.same({ mode = mode }, cjson.decode(assert.res_status(200, res)))
    end)
  end
end)
`,
      files,
    )
    allPass(results, 3)
  })
})
