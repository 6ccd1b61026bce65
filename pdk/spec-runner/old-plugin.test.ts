import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, it } from 'vitest'
import { allPass, runSpec } from './testing/specs.js'

// helpers.use_old_plugin as Kong's old-plugin-compatibility specs use it: the Kong started next runs the plugin
// from an older Kong's source (KONG_SPEC_TEST_OLD_VERSION_KONG_PATH), and the function it answers puts the current
// one back for the next start. The older Kong is a real temporary folder with an older `greeter`.
const greeter = (version: string) => `
local Greeter = { PRIORITY = 5, VERSION = "${version}" }
function Greeter:header_filter() kong.response.set_header("x-greeter", "${version}") end
return Greeter`
const SCHEMA = `return { name = "greeter", fields = { { config = { type = "record", fields = {} } } } }`

const old = mkdtempSync(join(tmpdir(), 'broker-old-kong-'))
mkdirSync(join(old, 'kong/plugins/greeter'), { recursive: true })
writeFileSync(join(old, 'kong/plugins/greeter/handler.lua'), greeter('1.0.0'))
writeFileSync(join(old, 'kong/plugins/greeter/schema.lua'), SCHEMA)
const before = process.env.KONG_SPEC_TEST_OLD_VERSION_KONG_PATH
process.env.KONG_SPEC_TEST_OLD_VERSION_KONG_PATH = old
afterAll(() => {
  if (before === undefined) delete process.env.KONG_SPEC_TEST_OLD_VERSION_KONG_PATH
  else process.env.KONG_SPEC_TEST_OLD_VERSION_KONG_PATH = before
  rmSync(old, { recursive: true, force: true })
})

describe('spec.helpers.use_old_plugin', () => {
  it("the Kong started after it runs the older Kong's plugin; after recovery a restarted Kong runs the current one", async () => {
    const results = await runSpec(
      `
local helpers = require "spec.helpers"
describe("greeter, old and new", function()
  local recover
  lazy_setup(function()
    recover = helpers.use_old_plugin("greeter")
    local bp = helpers.get_db_utils("postgres", nil, { "greeter" })
    local route = bp.routes:insert({ hosts = { "greet.test" } })
    bp.plugins:insert({ name = "greeter", route = { id = route.id } })
    assert(helpers.start_kong({ plugins = "bundled,greeter" }))
  end)
  lazy_teardown(function() helpers.stop_kong() end)
  local function version()
    local res = assert(helpers.proxy_client():get("/status/200", { headers = { host = "greet.test" } }))
    assert.res_status(200, res)
    return res.headers["x-greeter"]
  end
  it("runs the old version", function()
    assert.equal("1.0.0", version())
  end)
  it("runs the current version once recovered and restarted", function()
    recover()
    assert(helpers.restart_kong({ plugins = "bundled,greeter" }))
    assert.equal("2.0.0", version())
  end)
  it("names where it looked for a plugin the older Kong does not have", function()
    local ok, err = pcall(helpers.use_old_plugin, "nonesuch")
    assert.is_false(ok)
    assert.matches("use_old_plugin: no older nonesuch plugin (no folder ${old}/kong/plugins/nonesuch", err, 1, true)
  end)
end)`,
      { 'kong/plugins/greeter/handler.lua': greeter('2.0.0'), 'kong/plugins/greeter/schema.lua': SCHEMA },
    )
    allPass(results, 3)
  })
})
