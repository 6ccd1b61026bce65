import { describe, it } from 'vitest'
import { allPass, runSpec } from './testing/specs.js'

// A plugin repository's spec that enables one of Kong's own plugins beside its own: broker ships none of Kong's
// plugins, so Kong's refusal names where to find them (a Kong checkout on LUA_PATH); another name gets Kong's alone.
const SPEC = `
local helpers = require "spec.helpers"
describe("enabling a plugin the root does not have", function()
  it("names the path for one of Kong's bundled plugins, and keeps Kong's message for any other", function()
    local bp = helpers.get_db_utils("postgres", nil, {})
    local ok, err = pcall(bp.plugins.insert, bp.plugins, { name = "basic-auth" })
    assert.is_false(ok)
    assert.matches("plugin 'basic-auth' not enabled; add it to the 'plugins' configuration property", tostring(err), 1, true)
    assert.matches("put a Kong checkout on the path, --lua-path /path/to/kong or LUA_PATH=", tostring(err), 1, true)
    ok, err = pcall(bp.plugins.insert, bp.plugins, { name = "no-such-plugin" })
    assert.is_false(ok)
    assert.matches("add it to the 'plugins' configuration property", tostring(err), 1, true)
    assert.is_nil(tostring(err):find("LUA_PATH", 1, true))
  end)
end)
`

describe('a spec enabling a Kong plugin its root does not have', () => {
  it('is told to put a Kong checkout on the path (--lua-path, LUA_PATH)', async () => {
    allPass(await runSpec(SPEC), 1)
  })
})
