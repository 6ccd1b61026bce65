import { describe, it } from 'vitest'
import { allPass, runSpec } from './testing/specs.js'

// A spec writes files as busted under Kong lets it (os.tmpname, io.open "wb", Penlight, os.remove), and the plugins
// of the Kong it started read and write the same host files: `motd` answers with the file it is configured with,
// `tally` appends a line to its own.
const PLUGINS = {
  'kong/plugins/motd/handler.lua': `
local Motd = { PRIORITY = 900, VERSION = "1.0.0" }
function Motd:access(conf)
  local f, err = io.open(conf.path, "rb")
  if not f then return kong.response.exit(500, { message = err }) end
  local text = f:read("*a")
  f:close()
  local log = assert(io.open(conf.path .. ".log", "a"))
  log:write("served ", #text, "\\n")
  log:close()
  return kong.response.exit(200, text)
end
return Motd`,
  'kong/plugins/motd/schema.lua': `
return { name = "motd", fields = { { config = { type = "record", fields = {
  { path = { type = "string", required = true } },
} } } } }`,
}

describe('files a spec writes', () => {
  it("a spec's temp file is what a plugin reads in the same run; the plugin's own writes reach the spec", async () => {
    const results = await runSpec(
      `
local helpers = require "spec.helpers"
local pl_file = require "pl.file"
describe("motd", function()
  local proxy, name
  lazy_setup(function()
    name = os.tmpname()
    assert(io.open(name, "wb")):write("hello from the spec"):close()
    local bp = helpers.get_db_utils("postgres", nil, { "motd" })
    local route = bp.routes:insert({ hosts = { "motd.test" } })
    bp.plugins:insert({ name = "motd", route = { id = route.id }, config = { path = name } })
    assert(helpers.start_kong({ plugins = "bundled,motd" }))
    proxy = helpers.proxy_client()
  end)
  lazy_teardown(function()
    helpers.stop_kong()
    assert(os.remove(name))
    assert(os.remove(name .. ".log"))
  end)
  it("serves the file the spec wrote", function()
    local r = assert(proxy:get("/", { headers = { host = "motd.test" } }))
    assert.equal("hello from the spec", assert.res_status(200, r))
  end)
  it("rewritten with Penlight, the next request serves the new text and the plugin's log has both", function()
    assert(pl_file.write(name, "second"))
    local r = assert(proxy:get("/", { headers = { host = "motd.test" } }))
    assert.equal("second", assert.res_status(200, r))
    assert.equal("served 19\\nserved 6\\n", pl_file.read(name .. ".log"))
  end)
end)`,
      PLUGINS,
    )
    allPass(results, 2)
  })

  it("relative paths start at the root busted runs from, not at the spec file's folder", async () => {
    const results = await runSpec(
      `
describe("relative paths", function()
  it("read and write from the root", function()
    local f = assert(io.open("spec/fixtures/motd.txt", "rb"))
    assert.equal("from the root\\n", f:read("*a"))
    f:close()
    local out = assert(io.open("spec/fixtures/out.txt", "w"))
    out:write("written")
    out:close()
    assert.equal("written", require("pl.file").read("spec/fixtures/out.txt"))
    assert(os.remove("spec/fixtures/out.txt"))
  end)
end)`,
      { 'spec/fixtures/motd.txt': 'from the root\n' },
    )
    allPass(results, 1)
  })
})
