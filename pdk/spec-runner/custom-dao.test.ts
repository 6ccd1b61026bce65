import { describe, it } from 'vitest'
import { allPass, runSpec } from './testing/specs.js'

// A plugin DAO with methods of its own (daos.lua's `dao = "<module>"`, mixed into the DAO as Kong's DAO does) and a
// strategy module (kong/plugins/<name>/strategies/postgres/<dao>.lua behind `self.strategy`), as Kong's session
// plugin has for session_metadatas: its method reaches the rows through the strategy's SQL, from the plugin and
// from the spec, and wins over a finder name such as select_by_<field>.
const TALLY_FILES: Record<string, string> = {
  'kong/plugins/tally/handler.lua': `
local H = { PRIORITY = 1000, VERSION = "1.0.0" }
function H:access()
  local rows = assert(kong.db.tallies:select_by_word_and_kind(kong.request.get_query_arg("w"), "noun"))
  return kong.response.exit(200, { count = #rows })
end
return H`,
  'kong/plugins/tally/schema.lua': `return { name = "tally", fields = { { config = { type = "record", fields = {} } } } }`,
  'kong/plugins/tally/daos.lua': `
local typedefs = require "kong.db.schema.typedefs"
return { {
  name = "tallies", primary_key = { "id" }, dao = "kong.plugins.tally.daos.tallies", generate_admin_api = false,
  fields = { { id = typedefs.uuid }, { word = { type = "string" } }, { kind = { type = "string" } } },
} }`,
  'kong/plugins/tally/daos/tallies.lua': `
local tallies = {}
function tallies:select_by_word_and_kind(word, kind) return self.strategy:select_by_word_and_kind(word, kind) end
return tallies`,
  'kong/plugins/tally/strategies/postgres/tallies.lua': `
local tallies = {}
function tallies:select_by_word_and_kind(word, kind)
  local c = kong.db.connector
  return c:query("SELECT * FROM tallies WHERE word = " .. c:escape_literal(word) .. " AND kind = " ..
    c:escape_literal(kind) .. ";", "read")
end
return tallies`,
}

describe("a plugin DAO's own methods and strategy", () => {
  it('answer from the plugin and from the spec through the connector', async () => {
    const results = await runSpec(
      `
local helpers = require "spec.helpers"
local cjson = require "cjson"
describe("tallies", function()
  local proxy
  lazy_setup(function()
    local bp = helpers.get_db_utils("postgres", { "tallies" }, { "tally" })
    bp.plugins:insert({ name = "tally", route = { id = bp.routes:insert({ hosts = { "tally.test" } }).id } })
    bp.tallies:insert({ word = "it's", kind = "noun" })
    bp.tallies:insert({ word = "it's", kind = "noun" })
    bp.tallies:insert({ word = "it's", kind = "verb" })
    assert(helpers.start_kong({ plugins = "bundled,tally" }))
    proxy = helpers.proxy_client()
  end)
  it("from the plugin", function()
    local res = assert(proxy:get("/", { query = { w = "it's" }, headers = { host = "tally.test" } }))
    assert.same({ count = 2 }, cjson.decode(assert.res_status(200, res)))
  end)
  it("from the spec", function()
    assert.equal(1, #kong.db.tallies:select_by_word_and_kind("it's", "verb"))
  end)
end)`,
      TALLY_FILES,
    )
    allPass(results, 2)
  })
})
