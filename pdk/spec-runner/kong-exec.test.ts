import { describe, expect, it } from 'vitest'
import { runSpec, outcomes } from './testing/specs.js'

// A spec that reads Kong's version the way Pongo-style plugin templates do: `kong version` through
// helpers.kong_exec, or kong.meta (which a plugin's handler often names as its VERSION).
const run = runSpec

describe("Kong's version in a spec", () => {
  it('kong.meta and helpers.kong_exec("version") name the Kong broker emulates', async () => {
    const results = await run(`
local helpers = require "spec.helpers"
local meta = require "kong.meta"
local version = require "version"
local ok, stderr, stdout = assert(helpers.kong_exec("version"))
describe("version", function()
  it("meta", function()
    assert.equal(kong.version, meta._VERSION)
    assert.equal(meta._VERSION, meta.version)
    assert.equal(meta._VERSION, tostring(meta._VERSION_TABLE))
    assert.equal("kong/" .. meta._VERSION, meta._SERVER_TOKENS)
    assert.equal(3, meta._VERSION_TABLE.major)
  end)
  it("kong_exec", function()
    assert.is_true(ok)
    assert.equal("", stderr)
    assert.equal(meta._VERSION .. "\\n", stdout)
    assert.is_true(version(stdout:match("(%d[%d%.]+%d)")) >= version("3.0.0"))
    local ok4, code, out4 = helpers.kong_exec("version", nil, true)
    assert.same({ true, 0, stdout }, { ok4, code, out4 })
  end)
  it("another command", function()
    assert(helpers.kong_exec("start"))
  end)
end)`)
    expect(outcomes(results).slice(0, 2)).toEqual(['success version meta', 'success version kong_exec'])
    expect(results[2]?.message).toMatch(/spec\.helpers\.kong_exec: `kong start` is not emulated by broker/)
  })
})
