import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { runSpecFile, type SpecResult } from './session.js'
import { badgeRoot } from './testing/badge.js'

// Details of Kong that Kong's own plugin specs lean on, each pinned by a tiny spec of ours in Kong's style
// (testing/badge.ts for the root): the router's captures, OpenResty modules a unit spec requires
async function run(spec: string, files: Record<string, string> = {}): Promise<SpecResult[]> {
  const root = badgeRoot({ 'spec/x_spec.lua': spec, ...files })
  return runSpecFile({ root, file: join(root, 'spec/x_spec.lua'), shown: 'spec/x_spec.lua', timeoutMs: 10_000 })
}
const outcomes = (rs: SpecResult[]) => rs.map((r) => `${r.status} ${r.name}${r.message ? `: ${r.message}` : ''}`)
/** Every test of the spec passed (a failing one shows its message), and there were `n`. */
function allPass(results: SpecResult[], n: number): void {
  expect(outcomes(results).filter((o) => !o.startsWith('success'))).toEqual([])
  expect(results).toHaveLength(n)
}

describe("Kong's router matches", () => {
  it('uri_captures hold the whole match at 0, the groups from 1, the names (ngx.ctx.router_matches, kong.request)', async () => {
    const results = await run(
      `
local helpers = require "spec.helpers"
local cjson = require "cjson"
describe("captures", function()
  local proxy
  lazy_setup(function()
    local bp = helpers.get_db_utils("postgres", nil, { "captures" })
    local r1 = bp.routes:insert({ hosts = { "cap.test" }, paths = { [[~/user/(?P<user>\\w+)/(\\d+)]] } })
    bp.plugins:insert({ name = "captures", route = { id = r1.id } })
    local r2 = bp.routes:insert({ hosts = { "plain.test" }, paths = { "~/plain" } })
    bp.plugins:insert({ name = "captures", route = { id = r2.id } })
    assert(helpers.start_kong({ plugins = "bundled,captures" }))
    proxy = helpers.proxy_client()
  end)
  it("a regex path with groups", function()
    local r = assert(proxy:get("/user/ann/42/request", { headers = { host = "cap.test" } }))
    assert.res_status(200, r)
    assert.same({ ["#0"] = "/user/ann/42", ["#1"] = "ann", ["#2"] = "42", user = "ann" },
      cjson.decode(assert.response(r).has.header("x-captures")))
    -- kong.request.get_uri_captures() copies them: its unnamed ones start at 0 too
    assert.equal("/user/ann/42,ann,42", assert.response(r).has.header("x-unnamed"))
  end)
  it("a regex path without groups has none, as Kong's router leaves them out", function()
    local r = assert(proxy:get("/plain/request", { headers = { host = "plain.test" } }))
    assert.res_status(200, r)
    assert.equal("none", assert.response(r).has.header("x-captures"))
  end)
end)`,
      {
        'kong/plugins/captures/handler.lua': `
local cjson = require "cjson"
local H = { PRIORITY = 900, VERSION = "1.0.0" }
function H:header_filter()
  local c = (ngx.ctx.router_matches or {}).uri_captures
  if not c then return kong.response.set_header("x-captures", "none") end
  local out = {}
  -- the positions are numbers, as ngx.re.match gives them
  for k, v in pairs(c) do out[type(k) == "number" and "#" .. k or k] = v end
  kong.response.set_header("x-captures", cjson.encode(out))
  kong.response.set_header("x-unnamed", table.concat(kong.request.get_uri_captures().unnamed, ",", 0))
end
return H`,
        'kong/plugins/captures/schema.lua': `return { name = "captures", fields = { { config = { type = "record", fields = {} } } } }`,
      },
    )
    allPass(results, 2)
  })
})

describe('OpenResty modules a spec or plugin requires', () => {
  it('ngx.resp.add_header adds a value to the ones a response header has, each of a table', async () => {
    const results = await run(
      `
local helpers = require "spec.helpers"
describe("ngx.resp", function()
  local proxy
  lazy_setup(function()
    local bp = helpers.get_db_utils("postgres", nil, { "adder" })
    local r = bp.routes:insert({ hosts = { "add.test" } })
    bp.plugins:insert({ name = "adder", route = { id = r.id } })
    assert(helpers.start_kong({ plugins = "bundled,adder" }))
    proxy = helpers.proxy_client()
  end)
  it("add_header", function()
    local r = assert(proxy:get("/request", { headers = { host = "add.test" } }))
    assert.res_status(200, r)
    assert.same({ "a", "b" }, r.headers["x-one"])
    assert.same({ "c", "4" }, r.headers["x-two"])
  end)
end)`,
      {
        'kong/plugins/adder/handler.lua': `
local add_header = require("ngx.resp").add_header
local H = { PRIORITY = 900, VERSION = "1.0.0" }
function H:header_filter()
  ngx.header["x-one"] = "a"
  add_header("x-one", "b")
  add_header("x-two", { "c", 4 })
end
return H`,
        'kong/plugins/adder/schema.lua': `return { name = "adder", fields = { { config = { type = "record", fields = {} } } } }`,
      },
    )
    allPass(results, 1)
  })
})

describe("the database of Kong's specs", () => {
  it('has the default workspace; pgmoon.json makes the SQL literal; SQL itself fails naming db.connector:query', async () => {
    const results = await run(`
local helpers = require "spec.helpers"
local pgmoon_json = require "pgmoon.json"
describe("database", function()
  local db
  lazy_setup(function()
    local _
    _, db = helpers.get_db_utils("postgres", { "plugins", "workspaces" })
  end)
  it("default workspace", function()
    local ws = assert(db.workspaces:select_by_name("default"))
    assert.is_uuid(ws.id)
  end)
  it("pgmoon.json", function()
    assert.equal([['{"it''s":true}']], pgmoon_json.encode_json({ ["it's"] = true }))
    assert.same({ a = 1 }, pgmoon_json.decode_json('{"a":1}'))
  end)
  it("SQL", function()
    db.connector:query("INSERT INTO plugins (id) VALUES ('x');")
  end)
end)`)
    expect(outcomes(results)).toEqual([
      'success database default workspace',
      'success database pgmoon.json',
      "error database SQL: spec/x_spec.lua:19: db.connector:query is not emulated by broker (no Postgres runs: the database is in memory; write rows with the blueprints or db.<entity>): INSERT INTO plugins (id) VALUES ('x');",
    ])
  })
})
