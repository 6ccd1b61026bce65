import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { runSpecFile, type SpecResult } from './session.js'
import { badgeRoot } from './testing/badge.js'
import { allPass, runSpec } from './testing/specs.js'

// Details the logging plugins' own specs in Kong's repository lean on (file-log, statsd, datadog), each
// pinned by a tiny spec of ours in Kong's style with a plugin schema of ours (`trail`)
const TRAIL = {
  'kong/plugins/trail/handler.lua': `
local Trail = { PRIORITY = 9, VERSION = "1.0.0" }
function Trail:log(conf) kong.log.info("trail to ", os.getenv("TRAIL_HOST") or conf.path) end
return Trail`,
  'kong/plugins/trail/schema.lua': `
return { name = "trail", fields = {
  { protocols = { type = "set", elements = { type = "string" } } },
  { config = { type = "record", fields = {
    { path = { type = "string", required = true, match = "^[%w/]+$", err = "not a valid filename" } },
    { codes = { type = "array", elements = { type = "string", match = "^%d+$" } } },
    { metrics = { type = "array", elements = { type = "record", fields = {
        { stat = { type = "string", required = true, one_of = { "counter", "timer" } } },
        { rate = { type = "number" } },
      }, entity_checks = {
        { conditional = { if_field = "stat", if_match = { eq = "counter" }, then_field = "rate", then_match = { required = true } } },
      } } } },
  } } },
} }`,
}

async function run(spec: string): Promise<SpecResult[]> {
  const root = badgeRoot({ ...TRAIL, 'spec/x_spec.lua': spec })
  return runSpecFile({ root, file: join(root, 'spec/x_spec.lua'), shown: 'spec/x_spec.lua', timeoutMs: 10_000 })
}
const failing = (rs: SpecResult[]) =>
  rs.filter((r) => r.status !== 'success').map((r) => `${r.status} ${r.name}: ${r.message ?? ''}`)

describe("a logging plugin's schema spec", () => {
  it("Schema.new(schema):validate gives Kong's tree; a field's err stands for its validators' message", async () => {
    const results = await run(`
local Schema = require("kong.db.schema")
describe("trail (schema)", function()
  local schema
  lazy_setup(function() schema = Schema.new(require("kong.plugins.trail.schema")) end)
  it("accepts a good path", function()
    local ok, err = schema:validate({ protocols = { "http" }, config = { path = "/var/log" } })
    assert.is_nil(err)
    assert.is_true(ok)
  end)
  it("names the field's own err", function()
    local ok, err = schema:validate({ protocols = { "http" }, config = { path = "/ovo*" } })
    assert.is_nil(ok)
    assert.same({ config = { path = "not a valid filename" } }, err)
  end)
  it("keeps the type's message", function()
    local _, err = schema:validate({ config = { path = 42 } })
    assert.same({ config = { path = "expected a string" } }, err)
  end)
  it("refuses a schema that is not a plugin's", function()
    assert.has_error(function() Schema.new({ name = "x", fields = {} }):validate({}) end)
  end)
end)`)
    expect(failing(results)).toEqual([])
    expect(results).toHaveLength(4)
  })

  it("assert.contains finds an element past a hole of Kong's error arrays; a missing if_field is named for its check", async () => {
    const results = await run(`
local validate = require("spec.helpers").validate_plugin_config_schema
local schema = require "kong.plugins.trail.schema"
describe("trail (schema)", function()
  it("an array's errors", function()
    local _, err = validate({ path = "/a", codes = { "200", "x1" } }, schema)
    assert.equal(2, assert.contains("invalid value: x1", err.config.codes))
    assert.equal(2, assert.contains("^invalid", err.config.codes, true))
    assert.not_contains("invalid value: 200", err.config.codes)
    assert.match_re("the queue_size parameter is deprecated", [[queue_size\\s+param]])
    assert.not_match_re("abc", "^b")
  end)
  it("a conditional's if_field", function()
    local _, err = validate({ path = "/a", metrics = { { rate = 1 } } }, schema)
    assert.equal("field required for entity check", err.config.metrics[1].stat)
    _, err = validate({ path = "/a", metrics = { { stat = "counter" } } }, schema)
    assert.equal("required field missing", err.config.metrics[1].rate)
  end)
end)`)
    expect(failing(results)).toEqual([])
    expect(results).toHaveLength(2)
  })
})

describe("a logging plugin's environment", () => {
  it('helpers.setenv is what a plugin reads with os.getenv; unsetenv takes it away', async () => {
    const results = await run(`
local helpers = require "spec.helpers"
describe("env", function()
  lazy_setup(function() helpers.setenv("TRAIL_HOST", "collector.test") end)
  lazy_teardown(function() helpers.unsetenv("TRAIL_HOST") end)
  it("is seen", function()
    assert.equal("collector.test", os.getenv("TRAIL_HOST"))
    helpers.unsetenv("HOME")
    assert.is_nil(os.getenv("HOME"))
  end)
  it("kong.pdk.node.new() answers as kong.node", function()
    local node = require("kong.pdk.node").new()
    assert.equal(kong.node.get_hostname(), node.get_hostname())
    assert.has_error(function() node.no_such_function() end)
  end)
  it("helpers.execute runs a command", function()
    local ok, _, stdout = helpers.execute("echo hi")
    assert.is_true(ok)
    assert.equal("hi\\n", stdout)
    -- a failed command: false and its stderr, no third value; with \`returns\`, Penlight's executeex shape
    local n = select("#", helpers.execute("echo oops >&2; exit 3"))
    local failed, err = helpers.execute("echo oops >&2; exit 3")
    assert.equal(2, n)
    assert.is_false(failed)
    assert.equal("oops\\n", err)
    local done, code, out, errs = helpers.execute("echo out; echo err >&2; exit 4", true)
    assert.is_false(done)
    assert.equal(4, code)
    assert.equal("out\\n", out)
    assert.equal("err\\n", errs)
  end)
end)`)
    expect(failing(results)).toEqual([])
    expect(results).toHaveLength(3)
  })
})

describe('a config field given as null', () => {
  it("is stored as null, not as its default, and the plugin reads nil (datadog's host from the environment)", async () => {
    const files = {
      'kong/plugins/agent/handler.lua': `
local Agent = { PRIORITY = 9, VERSION = "1.0.0" }
function Agent:access(conf)
  return kong.response.exit(200, { host = conf.host or os.getenv("AGENT_HOST"), null = conf.host == ngx.null })
end
return Agent`,
      'kong/plugins/agent/schema.lua': `
return { name = "agent", fields = { { config = { type = "record", fields = {
  { host = { type = "string", default = "localhost" } },
} } } } }`,
    }
    const results = await runSpec(
      `
local helpers = require "spec.helpers"
local cjson = require "cjson"
describe("agent", function()
  local stored
  lazy_setup(function()
    helpers.setenv("AGENT_HOST", "collector.test")
    local bp = helpers.get_db_utils("postgres", nil, { "agent" })
    local r = bp.routes:insert { hosts = { "agent.test" } }
    stored = bp.plugins:insert { route = { id = r.id }, name = "agent", config = { host = ngx.null } }
    assert(helpers.start_kong({ plugins = "bundled,agent" }))
  end)
  lazy_teardown(function() helpers.stop_kong() end)
  it("reads the environment", function()
    assert.equal(ngx.null, stored.config.host)
    local body = assert.res_status(200, helpers.proxy_client():get("/", { headers = { host = "agent.test" } }))
    assert.same({ host = "collector.test", null = false }, cjson.decode(body))
  end)
end)`,
      files,
    )
    allPass(results, 1)
  })
})
