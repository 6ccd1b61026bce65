import { describe, it } from 'vitest'
import { runSpec, allPass } from './testing/specs.js'

// What Kong's rate-limiting specs lean on, on specs of our own in Kong's style: the Postgres
// connector its cluster policy queries, Redis, timers on the spec's clock. Each `it` is one behaviour.
const run = runSpec

// a counter table as Kong's rate-limiting daos.lua declares it: a primary key of five fields
const METRICS_DAOS = `
return { {
  name = "tally_metrics", primary_key = { "identifier", "period", "period_date", "service_id", "route_id" },
  generate_admin_api = false, ttl = true,
  fields = {
    { identifier = { type = "string", required = true } },
    { period = { type = "string", required = true } },
    { period_date = { type = "integer", timestamp = true, required = true } },
    { service_id = { type = "string", uuid = true, required = true } },
    { route_id = { type = "string", uuid = true, required = true } },
    { value = { type = "integer", required = true } },
  },
} }`
const TALLY = {
  // its access phase shows the config's window, as the proxy reads it
  'kong/plugins/tally/handler.lua':
    'return { PRIORITY = 900, VERSION = "1.0.0",\n' +
    '  access = function(_, conf) kong.response.set_header("X-Window", tostring(conf.window)) end }',
  'kong/plugins/tally/schema.lua':
    'return { name = "tally", fields = { { config = { type = "record", fields = {\n' +
    '  { window = { type = "integer", required = true, default = 60 } } } } } } }',
  'kong/plugins/tally/daos.lua': METRICS_DAOS,
}

describe("the connector of spec.helpers' Postgres", () => {
  it("runs the cluster policy's upsert, and kong.db finds the row by its five-field key", async () => {
    const results = await run(
      `
local helpers = require "spec.helpers"
local NIL = "00000000-0000-0000-0000-000000000000"
local function add(c, n)
  return c:query(string.format([[BEGIN;
    INSERT INTO "tally_metrics" ("identifier", "period", "period_date", "service_id", "route_id", "value", "ttl")
         VALUES (%s, %s, TO_TIMESTAMP(%s) AT TIME ZONE 'UTC', %s, %s, %s, CURRENT_TIMESTAMP AT TIME ZONE 'UTC' + INTERVAL %s)
    ON CONFLICT ("identifier", "period", "period_date", "service_id", "route_id") DO UPDATE
            SET "value" = "tally_metrics"."value" + EXCLUDED."value";
    COMMIT;]], c:escape_literal("1.2.3.4"), c:escape_literal("minute"), c:escape_literal(1424217600.0),
    c:escape_literal(NIL), c:escape_literal(NIL), c:escape_literal(n), c:escape_literal("60 second")))
end
describe("connector", function()
  local db
  lazy_setup(function()
    _, db = helpers.get_db_utils("postgres", nil, { "tally" })
    require "kong.plugins.tally.handler"
  end)
  it("counts", function()
    assert(add(db.connector, 2))
    assert(add(db.connector, 3))
    assert.equal("postgres", kong.db.strategy)
    local row = assert(kong.db.tally_metrics:select({ identifier = "1.2.3.4", period = "minute",
      period_date = 1424217600, service_id = NIL, route_id = NIL }))
    assert.equal(5, row.value)
    local res = assert(db.connector:query([[SELECT "value" FROM "tally_metrics" WHERE "identifier" = '1.2.3.4']]))
    assert.same({ { value = 5 } }, res)
  end)
  it("a row's ttl passes on the spec's clock", function()
    ngx.sleep(61)
    assert.same({}, assert(db.connector:query([[SELECT * FROM "tally_metrics"]])))
  end)
  it("a dropped table fails the next read, until a truncate", function()
    assert(db.connector:query("DROP TABLE tally_metrics"))
    local row, err = kong.db.tally_metrics:select({ identifier = "x" })
    assert.is_nil(row)
    assert.matches('relation "tally_metrics" does not exist', err, 1, true)
    assert.is_nil((add(db.connector, 1)))
    db:truncate("tally_metrics")
    assert(add(db.connector, 1))
  end)
  it("a statement it does not run is an error naming it", function()
    local res, err = db.connector:query("DELETE FROM tally_metrics")
    assert.is_nil(res)
    assert.matches("does not run this statement", err, 1, true)
  end)
  -- a plugin row written in SQL, as Kong's correlation-id schema spec writes one
  local function insert_plugin(id, config_json)
    local ws = assert(kong.db.workspaces:select_by_name("default"))
    return db.connector:query("INSERT INTO plugins (id, name, config, enabled, ws_id) VALUES ('" .. id ..
      "', 'tally', '" .. config_json .. "'::jsonb, TRUE, '" .. ws.id .. "'); COMMIT;")
  end
  it("an INSERT keeps the id it names, and a ::jsonb value is the table it spells", function()
    local id = "9a23e9a8-d1b2-449a-8240-f5c4a358c40f"
    assert(insert_plugin(id, '{"limit":5,"names":["a"]}'))
    local res = assert(db.connector:query("SELECT config, enabled FROM plugins WHERE id='" .. id .. "';"))
    assert.same({ { config = { limit = 5, names = { "a" } }, enabled = true } }, res)
    assert.equal("tally", assert(kong.db.plugins:select({ id = id })).name)
    local bad, err = db.connector:query([[SELECT * FROM plugins WHERE config = '{nope'::jsonb]])
    assert.is_nil(bad)
    assert.matches("invalid input syntax for type jsonb", err, 1, true)
  end)
  it("a required field a row holds as null reads as its default through Kong, and as null in SQL", function()
    local id = "5b0a1c8e-8f6e-4a8e-9d7e-0c2b8c1f2a11"
    assert(insert_plugin(id, '{"window":null}'))
    local res = assert(db.connector:query("SELECT config FROM plugins WHERE id='" .. id .. "'"))
    assert.equal(ngx.null, res[1].config.window)
    assert(helpers.start_kong({ database = "postgres", plugins = "bundled,tally" }))
    local admin = helpers.admin_client()
    local body = assert.res_status(200, admin:get("/plugins/" .. id))
    admin:close()
    helpers.stop_kong()
    assert.equal(60, require("cjson").decode(body).config.window)
  end)
  it("an UPDATE sets the columns of the rows its WHERE names: an ARRAY, a foreign key's column as the reference", function()
    local id = "0c9e2b77-3d0f-4a55-8d2b-6f1f5d9f8a01"
    assert(insert_plugin(id, '{"window":null}'))
    local service = helpers.blueprints.services:insert({ host = helpers.mock_upstream_host, port = helpers.mock_upstream_port })
    local route = helpers.blueprints.routes:insert({ hosts = { "tally.test" }, service = service })
    local res = assert(db.connector:query("UPDATE plugins SET route_id='" .. route.id
      .. "', protocols=ARRAY['http','https'] WHERE id='" .. id .. "'"))
    assert.same({ affected_rows = 1 }, res)
    local row = assert(kong.db.plugins:select({ id = id }))
    assert.equal(route.id, row.route.id)
    assert.same({ "http", "https" }, row.protocols)
    assert.same({ affected_rows = 0 }, assert(db.connector:query("UPDATE plugins SET enabled = FALSE WHERE id = 'none'")))
    -- the proxy reads the null required field as its default, as the Admin API shows it
    assert(helpers.start_kong({ database = "postgres", plugins = "bundled,tally" }))
    local proxy = helpers.proxy_client()
    local r = assert(proxy:get("/", { headers = { host = "tally.test" } }))
    proxy:close()
    helpers.stop_kong()
    assert.equal("60", r.headers["X-Window"])
  end)
  it("truncating the workspaces truncates every row that belongs to one (Kong truncates with CASCADE)", function()
    local bp = helpers.get_db_utils("postgres", { "routes" })
    bp.routes:insert({ hosts = { "gone.test" } })
    helpers.get_db_utils("postgres", { "workspaces" })
    local n = 0
    for _ in kong.db.routes:each() do n = n + 1 end
    assert.equal(0, n)
    assert.truthy(kong.db.workspaces:select_by_name("default"))
  end)
end)`,
      TALLY,
    )
    allPass(results, 8)
  })
})

describe('timers on the spec clock', () => {
  it('kong.timer (resty.timerng) and ngx.timer.at run when a sleep passes their delay', async () => {
    const results = await run(`
local helpers = require "spec.helpers"
describe("timers", function()
  it("kong.timer:at runs once its delay has passed on a sleep", function()
    local seen = {}
    assert(kong.timer:at(0.5, function(premature, v) seen[#seen + 1] = v end, "a"))
    ngx.sleep(0.2)
    assert.same({}, seen)
    ngx.sleep(0.4)
    assert.same({ "a" }, seen)
  end)
  it("resty.timerng: every repeats, cancel stops it", function()
    local t = require("resty.timerng").new()
    t:start()
    local n = 0
    local name = assert(t:named_every("tick", 1, function() n = n + 1 end))
    ngx.sleep(1.1)
    ngx.sleep(1)
    assert.equal(2, n)
    assert(t:cancel(name))
    ngx.sleep(3)
    assert.equal(2, n)
  end)
  it("ngx.timer.at from a spec's line runs during ngx.sleep", function()
    local done = false
    assert(ngx.timer.at(1, function() done = true end))
    ngx.sleep(1)
    assert.is_true(done)
  end)
end)`)
    allPass(results, 3)
  })
})

describe('kong.vault.try', () => {
  it("calls back with the options and answers the callback's values (rate-limiting's Redis auth)", async () => {
    const results = await run(`
describe("vault", function()
  it("try", function()
    local seen
    local ok, err = kong.vault.try(function(cfg) seen = cfg.password return "OK" end, { password = "p" })
    assert.equal("OK", ok)
    assert.is_nil(err)
    assert.equal("p", seen)
    local res, why = kong.vault.try(function() return nil, "WRONGPASS" end, { password = "x" })
    assert.is_nil(res)
    assert.equal("WRONGPASS", why)
  end)
end)`)
    allPass(results, 1)
  })
})

// a plugin with a deprecated shorthand field, as rate-limiting's redis_host is to redis.host
const TIDE = {
  'kong/plugins/tide/handler.lua': 'return { PRIORITY = 900, VERSION = "1.0.0" }',
  'kong/plugins/tide/schema.lua': `
local function moved(name, field)
  return { [name] = { type = "string", deprecation = { replaced_with = { { path = { "store", field } } },
    message = "tide: config." .. name .. " is deprecated, please use config.store." .. field .. " instead",
    removal_in_version = "4.0" },
    func = function(value) return { store = { [field] = value } } end } }
end
return { name = "tide", fields = { { config = { type = "record",
  fields = { { store = { type = "record", fields = {
    { host = { type = "string", default = "127.0.0.1" } },
    { user = { type = "string" } },
  } } } },
  shorthand_fields = { moved("store_host", "host"), moved("store_user", "user") },
} } } }`,
}

describe('shorthand fields through the Admin API', () => {
  it('move into their record (merged, not replaced), show beside it, are warned of, and a PATCH moves them first', async () => {
    const results = await run(
      `
local helpers = require "spec.helpers"
local cjson = require "cjson"
describe("shorthands", function()
  local admin
  lazy_setup(function()
    helpers.get_db_utils("postgres", nil, { "tide" })
    assert(helpers.start_kong({ plugins = "bundled,tide" }))
    admin = helpers.admin_client()
  end)
  it("moves, shows, warns and patches", function()
    local res = admin:post("/plugins", { body = { name = "tide", config = { store_host = "h", store_user = "u" } },
      headers = { ["Content-Type"] = "application/json" } })
    local json = cjson.decode(assert.res_status(201, res))
    assert.same({ host = "h", user = "u" }, json.config.store)
    assert.equal("h", json.config.store_host)
    assert.equal("u", json.config.store_user)
    assert.logfile().has.line("tide: config.store_host is deprecated, please use config.store.host instead (deprecated after 4.0)", true)
    res = admin:patch("/plugins/" .. json.id, { body = { config = { store_host = "h2" } },
      headers = { ["Content-Type"] = "application/json" } })
    json = cjson.decode(assert.res_status(200, res))
    assert.same({ host = "h2", user = "u" }, json.config.store)
    res = admin:post("/plugins", { body = { name = "tide", config = { store_host = "a", store = { host = "b" } } },
      headers = { ["Content-Type"] = "application/json" } })
    local body = assert.res_status(400, res)
    assert.matches("both deprecated and new field are used but their values mismatch", body, 1, true)
  end)
end)`,
      TIDE,
    )
    allPass(results, 1)
  })
})

// a plugin with a deprecated field of its own (not a shorthand), as http-log's queue_size
const EBB = {
  'kong/plugins/ebb/handler.lua': 'return { PRIORITY = 900, VERSION = "1.0.0" }',
  'kong/plugins/ebb/schema.lua': `
return { name = "ebb", fields = { { config = { type = "record", fields = {
  { batch = { type = "integer", deprecation = { message = "ebb: config.batch is deprecated, please use config.queue",
    removal_in_version = "4.0", old_default = 1 } } },
} } } } }`,
}

describe('a deprecated field through the Admin API', () => {
  it('is warned of when given a value other than its old default, as Kong validates it', async () => {
    const results = await run(
      `
local helpers = require "spec.helpers"
describe("deprecated", function()
  local admin
  lazy_setup(function()
    helpers.get_db_utils("postgres", nil, { "ebb" })
    assert(helpers.start_kong({ plugins = "bundled,ebb" }))
    admin = helpers.admin_client()
  end)
  before_each(function() helpers.clean_logfile() end)
  local function post(config)
    local res = admin:post("/plugins", { body = { name = "ebb", config = config },
      headers = { ["Content-Type"] = "application/json" } })
    local id = require("cjson").decode(assert.res_status(201, res)).id
    assert.res_status(204, admin:delete("/plugins/" .. id))
  end
  it("not without it", function()
    post({})
    assert.logfile().has.no.line("config.batch is deprecated", true)
  end)
  it("not at its old default", function()
    post({ batch = 1 })
    assert.logfile().has.no.line("config.batch is deprecated", true)
  end)
  it("at another value", function()
    post({ batch = 2 })
    assert.logfile().has.line("ebb: config.batch is deprecated, please use config.queue (deprecated after 4.0)", true)
  end)
end)`,
      EBB,
    )
    allPass(results, 3)
  })
})
