import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { runSpecFile, type SpecResult } from './session.js'
import { badgeRoot } from './testing/badge.js'

// What third-party plugin repositories' specs lean on (issue 31, run on public plugin repositories): each pinned
// by a tiny spec of ours in their style (testing/badge.ts for the root)
async function run(spec: string, files: Record<string, string> = {}): Promise<SpecResult[]> {
  const root = badgeRoot({ 'spec/x_spec.lua': spec, ...files })
  return runSpecFile({ root, file: join(root, 'spec/x_spec.lua'), shown: 'spec/x_spec.lua', timeoutMs: 10_000 })
}
const outcomes = (rs: SpecResult[]) => rs.map((r) => `${r.status} ${r.name}${r.message ? `: ${r.message}` : ''}`)

describe('spec.helpers.kong_exec', () => {
  it('"version" prints the Kong version the emulator is, as `kong version` does; get_version compares it', async () => {
    const results = await run(`local helpers = require "spec.helpers"
local version = require("version").version or require("version")
local KONG_VERSION
do
  local _, _, out = assert(helpers.kong_exec("version"))
  KONG_VERSION = version(out:match("(%d[%d%.]+%d)"))
end
describe("kong_exec", function()
  it("version", function()
    local ok, stderr, out = helpers.kong_exec("version")
    assert.is_true(ok)
    assert.equal("", stderr)
    assert.equal(kong.version .. "\\n", out)
    assert.is_true(KONG_VERSION >= version("3.0.0"))
    assert.is_true(helpers.get_version() == KONG_VERSION)
  end)
  it("version --all", function()
    local ok, _, out = helpers.kong_exec("version -a")
    assert.is_true(ok)
    assert.matches("^Kong: " .. kong.version:gsub("%.", "%%.") .. "\\n", out)
  end)
  it("another command", function()
    local ok, err, out = helpers.kong_exec("migrations up")
    assert.is_false(ok)
    assert.is_nil(out)
    assert.matches("kong migrations up", err, 1, true)
    assert.matches("not emulated", err, 1, true)
  end)
end)
`)
    expect(outcomes(results)).toEqual([
      'success kong_exec version',
      'success kong_exec version --all',
      'success kong_exec another command',
    ])
  })
})
