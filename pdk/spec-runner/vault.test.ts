import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { loadFixture } from '../fixture/index.js'
import { runScenario } from '../runner/index.js'
import { closePlugins, preparePlugins } from '../runner/plugins.js'
import { runSpecFile } from './session.js'
import { badgeRoot } from './testing/badge.js'
import { allPass, runSpec } from './testing/specs.js'

// Vault references in a plugin's config, as Kong's http-log and datadog specs use them: the spec sets a
// variable with helpers.setenv, configures `{vault://env/<name>}` in a referenceable field, and the plugin
// sees the value. `echo` answers its own config, so the spec reads what the plugin was handed.
const ECHO = {
  'kong/plugins/echo/handler.lua': `
local cjson = require "cjson"
local Echo = { PRIORITY = 900, VERSION = "1.0.0" }
function Echo:access(conf)
  return kong.response.exit(200, cjson.encode({ conf = conf, got = kong.vault.get("{vault://env/echo-token}") }))
end
return Echo`,
  'kong/plugins/echo/schema.lua': `
return { name = "echo", fields = { { config = { type = "record", fields = {
  { token = { type = "string", referenceable = true, match = "^%w+$" } },
  { plain = { type = "string" } },
  { missing = { type = "string", referenceable = true } },
  { headers = { type = "map", keys = { type = "string" }, values = { type = "string", referenceable = true } } },
  { tags = { type = "array", elements = { type = "string", referenceable = true } } },
  { store = { type = "record", fields = { { password = { type = "string", referenceable = true } } } } },
} } } } }`,
}

const ECHO_SPEC = `
local helpers = require "spec.helpers"
local cjson = require "cjson"
describe("echo", function()
  local proxy_client
  lazy_setup(function()
    local bp = helpers.get_db_utils("postgres", nil, { "echo" })
    local r = bp.routes:insert { hosts = { "echo.test" } }
    bp.plugins:insert { route = { id = r.id }, name = "echo", config = {
      token = "{vault://env/echo-token}",
      plain = "{vault://env/echo-token}",
      missing = "{vault://env/echo-nowhere}",
      headers = { a = "one", b = "{vault://env/echo-json/user}" },
      tags = { "{vault://env/token?prefix=echo-}", "two" },
      store = { password = "{vault://env/echo-json/pass}" },
    } }
    helpers.setenv("ECHO_TOKEN", "t0k")
    helpers.setenv("ECHO_JSON", '{"user":"u1","pass":"p1"}')
    assert(helpers.start_kong({ plugins = "bundled,echo", vaults = "env" }))
    proxy_client = helpers.proxy_client()
  end)
  lazy_teardown(function()
    helpers.unsetenv("ECHO_TOKEN")
    helpers.unsetenv("ECHO_JSON")
    helpers.stop_kong()
  end)
  it("hands the plugin the values", function()
    local body = assert.res_status(200, proxy_client:get("/", { headers = { host = "echo.test" } }))
    local json = cjson.decode(body)
    local conf = json.conf
    assert.equal("t0k", conf.token)
    assert.equal("{vault://env/echo-token}", conf.plain)
    assert.same({ a = "one", b = "u1" }, conf.headers)
    assert.same({ "t0k", "two" }, conf.tags)
    assert.equal("p1", conf.store.password)
    assert.equal("t0k", json.got)
    assert.same({ token = "{vault://env/echo-token}", missing = "{vault://env/echo-nowhere}",
      headers = { b = "{vault://env/echo-json/user}" }, tags = { "{vault://env/token?prefix=echo-}" } }, conf["$refs"])
    assert.same({ password = "{vault://env/echo-json/pass}" }, conf.store["$refs"])
  end)
  it("makes an unresolvable reference an empty string and warns", function()
    local body = assert.res_status(200, proxy_client:get("/", { headers = { host = "echo.test" } }))
    assert.equal("", cjson.decode(body).conf.missing)
    assert.logfile().has.line("unable to resolve reference {vault://env/echo-nowhere} "
      .. "(could not get value from external vault (no value found))", true)
  end)
  it("answers kong.vault.get in the spec's own code", function()
    assert.equal("t0k", kong.vault.get("{vault://env/echo-token}"))
    assert.is_true(kong.vault.is_reference("{vault://env/echo-token}"))
    assert.equal("echo-token", kong.vault.parse_reference("{vault://env/echo-token}").resource)
    helpers.unsetenv("ECHO_TOKEN")
    local v, err = kong.vault.get("{vault://env/echo-token}")
    assert.is_nil(v)
    assert.equal("could not get value from external vault (no value found)", err)
    helpers.setenv("ECHO_TOKEN", "t0k")
  end)
end)`

describe('vault references in a plugin config', () => {
  it("resolve against the spec's environment in referenceable fields, keep $refs, and warn of what does not resolve", async () => {
    const results = await runSpec(ECHO_SPEC, ECHO)
    allPass(results, 3)
  })

  it("--record writes the spec's environment as the fixture's env vault, so pdk run replays the resolved config", async () => {
    const root = badgeRoot({ ...ECHO, 'spec/x_spec.lua': ECHO_SPEC })
    const dir = mkdtempSync(join(tmpdir(), 'spec-vault-record-'))
    const files: string[] = []
    await runSpecFile({
      root,
      file: join(root, 'spec/x_spec.lua'),
      shown: 'spec/x_spec.lua',
      timeoutMs: 10_000,
      record: dir,
      recorded: files,
    })
    expect(files).toHaveLength(2)
    const recorded = JSON.parse(readFileSync(files[0]!, 'utf8')) as { vault?: unknown }
    expect(recorded.vault).toEqual({ env: { ECHO_TOKEN: 't0k', ECHO_JSON: '{"user":"u1","pass":"p1"}' } })
    const loaded = loadFixture(files[0]!)
    const plugins = await preparePlugins(loaded)
    try {
      const r = await runScenario(loaded, plugins)
      expect(r.failures).toEqual([])
      expect(r.response.status).toBe(200)
    } finally {
      closePlugins(plugins)
    }
  })
})
