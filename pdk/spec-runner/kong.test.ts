import { describe, expect, it } from 'vitest'
import { runSpec, outcomes, allPass } from './testing/specs.js'

// Kong in process for spec.helpers (the Admin API, plugin scoping, the error.log), on specs of our own
// against the badge and stamp plugins
// (testing/badge.ts): each `it` of a spec is one behaviour; a failing one shows its message.
const run = runSpec
/** A plugin's schema.lua with an empty config. */
const emptySchema = (name: string) =>
  `return { name = "${name}", fields = { { config = { type = "record", fields = {} } } } }`

const PRELUDE = `
local helpers = require "spec.helpers"
local cjson = require "cjson"
local bp, db, admin, proxy, route
local function call(method, path, body, headers)
  headers = headers or (type(body) == "table" and { ["Content-Type"] = "application/json" } or nil)
  local r = assert(admin:send { method = method, path = path, body = body, headers = headers })
  local text = r:read_body()
  return r.status, text ~= "" and cjson.decode(text) or nil
end
local function get(host, headers)
  headers = headers or {}
  headers.host = host
  local r = assert(proxy:get("/request", { headers = headers }))
  local text = r:read_body()
  return r.status, cjson.decode(text)
end
`

describe('the Admin API of spec.helpers', () => {
  it('consumers and their credentials through the API are what the next proxied request sees', async () => {
    const results = await run(`${PRELUDE}
describe("admin", function()
  lazy_setup(function()
    bp, db = helpers.get_db_utils("postgres", nil, { "badge" })
    route = bp.routes:insert({ hosts = { "badge.test" } })
    bp.plugins:insert({ name = "badge", route = { id = route.id } })
    assert(helpers.start_kong({ plugins = "bundled,badge" }))
    admin, proxy = helpers.admin_client(), helpers.proxy_client()
  end)
  it("creates a consumer and a credential nested under it", function()
    local status, c = call("POST", "/consumers", { username = "ann" })
    assert.equal(201, status)
    assert.is_uuid(c.id)
    local s2, cred = call("POST", "/consumers/ann/badge", { key = "k-1" })
    assert.equal(201, s2)
    assert.same({ id = c.id }, cred.consumer)
    assert.equal(1, cred.level)
    local s3, body = get("badge.test", { ["x-badge"] = "k-1" })
    assert.equal(200, s3)
    assert.equal("ann", body.headers["x-badge-owner"])
  end)
  it("a form body is decoded by the DAO's schema", function()
    local status, cred = call("POST", "/consumers/ann/badge", "key=k-2&level=3",
      { ["Content-Type"] = "application/x-www-form-urlencoded" })
    assert.equal(201, status)
    assert.equal(3, cred.level)
  end)
  it("finds a credential by its endpoint key, and its consumer", function()
    local status, cred = call("GET", "/badges/k-1")
    assert.equal(200, status)
    local s2, c = call("GET", "/badges/k-1/consumer")
    assert.equal(200, s2)
    assert.equal("ann", c.username)
    assert.equal(cred.consumer.id, c.id)
    assert.equal(200, (call("GET", "/consumers/ann/badge/" .. cred.id)))
  end)
  it("a refused credential: 400 naming the field, 409 on a unique one", function()
    local status, err = call("POST", "/consumers/ann/badge", { key = "k-3", level = 9 })
    assert.equal(400, status)
    assert.same({ code = 2, name = "schema violation", message = "schema violation (level: value should be between 1 and 5)",
      fields = { level = "value should be between 1 and 5" } }, err)
    local s2, dup = call("POST", "/consumers/ann/badge", { key = "k-1" })
    assert.equal(409, s2)
    assert.equal("unique constraint violation", dup.name)
    assert.same({ key = "k-1" }, dup.fields)
  end)
  it("a changed credential is what the next request sees", function()
    assert.equal(200, (call("PATCH", "/badges/k-1", { key = "k-9" })))
    assert.equal(401, (get("badge.test", { ["x-badge"] = "k-1" })))
    assert.equal(200, (get("badge.test", { ["x-badge"] = "k-9" })))
  end)
  it("rows of the blueprints and of kong.db are the API's rows", function()
    local c = bp.consumers:insert({ username = "bob" })
    local cred = assert(db.badges:insert({ consumer = { id = c.id }, key = "k-b" }))
    local status, list = call("GET", "/consumers/bob/badge")
    assert.equal(200, status)
    assert.equal(cred.id, list.data[1].id)
    assert.equal("k-b", db.badges:select_by_key("k-b").key)
  end)
  it("a missing parent or entity is 404; deleting a consumer takes its credentials", function()
    assert.equal(404, (call("GET", "/consumers/nobody/badge")))
    assert.equal(204, (call("DELETE", "/consumers/ann")))
    assert.equal(404, (call("GET", "/badges/k-9")))
    assert.equal(401, (get("badge.test", { ["x-badge"] = "k-9" })))
    assert.equal(204, (call("DELETE", "/consumers/ann")))
  end)
end)`)
    allPass(results, 7)
  })

  it('plugins: created, patched and deleted through the API; a config Kong refuses is a schema violation', async () => {
    const results = await run(`${PRELUDE}
describe("plugins", function()
  local plugin
  lazy_setup(function()
    bp, db = helpers.get_db_utils("postgres", nil, { "stamp" })
    route = bp.routes:insert({ hosts = { "stamp.test" } })
    assert(helpers.start_kong({ plugins = "bundled,stamp" }))
    admin, proxy = helpers.admin_client(), helpers.proxy_client()
  end)
  it("refuses a config naming each field", function()
    local status, err = call("POST", "/plugins", { name = "stamp", config = { count = 20 } })
    assert.equal(400, status)
    assert.same({ config = { value = "required field missing", count = "value should be between 1 and 10" } }, err.fields)
    assert.equal("2 schema violations (config.count: value should be between 1 and 10; config.value: required field missing)",
      err.message)
    local s2, e2 = call("POST", "/plugins", { name = "nope" })
    assert.equal(400, s2)
    assert.equal("plugin 'nope' not enabled; add it to the 'plugins' configuration property", e2.fields.name)
    local s3, e3 = call("POST", "/plugins", { name = "stamp", route = { id = "00000000-0000-4000-8000-000000000001" },
      config = { value = "v" } })
    assert.equal(400, s3)
    assert.equal("foreign key violation", e3.name)
  end)
  it("a plugin created on a route runs on the next request", function()
    local status, p = call("POST", "/routes/" .. route.id .. "/plugins", { name = "stamp", config = { value = "one" } })
    assert.equal(201, status)
    plugin = p
    assert.same({ id = route.id }, p.route)
    local s2, body = get("stamp.test")
    assert.equal(200, s2)
    assert.equal("one", body.headers["x-stamp"])
  end)
  it("PATCH merges the config it is given; the next request sees it", function()
    local status, p = call("PATCH", "/plugins/" .. plugin.id, { config = { value = "two" } })
    assert.equal(200, status)
    assert.equal("two", p.config.value)
    assert.equal("two", select(2, get("stamp.test")).headers["x-stamp"])
    assert.equal(400, (call("PATCH", "/plugins/" .. plugin.id, { config = { count = 0 } })))
    assert.equal(404, (call("PATCH", "/plugins/00000000-0000-4000-8000-000000000009", { enabled = false })))
  end)
  it("DELETE removes it", function()
    assert.equal(204, (call("DELETE", "/plugins/" .. plugin.id)))
    assert.is_nil(select(2, get("stamp.test")).headers["x-stamp"])
    assert.equal(404, (call("GET", "/plugins/" .. plugin.id)))
  end)
  it("services and routes: a route made through the API is routed; a service with routes cannot go", function()
    local status, s = call("POST", "/services", { name = "up", url = helpers.mock_upstream_url })
    assert.equal(201, status)
    assert.equal(helpers.mock_upstream_port, s.port)
    local s2, r = call("POST", "/services/up/routes", { hosts = { "api.test" } })
    assert.equal(201, s2)
    assert.same({ id = s.id }, r.service)
    assert.equal(200, (get("api.test")))
    assert.equal(400, (call("DELETE", "/services/up")))
    assert.equal(204, (call("DELETE", "/routes/" .. r.id)))
    assert.equal(404, (get("api.test")))
    assert.equal(200, (call("GET", "/plugins/enabled")))
  end)
end)`)
    allPass(results, 5)
  })
})

describe('plugin scoping through Kong in process', () => {
  it("a consumer's instance wins once a higher-priority plugin authenticated that consumer", async () => {
    const results = await run(
      `${PRELUDE}
describe("scoping", function()
  lazy_setup(function()
    bp, db = helpers.get_db_utils("postgres", nil, { "badge", "stamp" })
    route = bp.routes:insert({ hosts = { "s.test" } })
    local ann = bp.consumers:insert({ username = "ann" })
    local bob = bp.consumers:insert({ username = "bob" })
    bp.badges:insert({ consumer = { id = ann.id }, key = "a" })
    bp.badges:insert({ consumer = { id = bob.id }, key = "b" })
    bp.plugins:insert({ name = "badge", route = { id = route.id } })
    bp.plugins:insert({ name = "stamp", config = { value = "global" } })
    bp.plugins:insert({ name = "stamp", consumer = { id = ann.id }, config = { value = "ann" } })
    bp.plugins:insert({ name = "stamp", route = { id = route.id }, consumer = { id = bob.id }, config = { value = "bob+route" } })
    assert(helpers.start_kong({ plugins = "bundled,badge,stamp" }))
    proxy = helpers.proxy_client()
  end)
  it("ann's own instance", function()
    assert.equal("ann", select(2, get("s.test", { ["x-badge"] = "a" })).headers["x-stamp"])
  end)
  it("bob's route-and-consumer instance", function()
    assert.equal("bob+route", select(2, get("s.test", { ["x-badge"] = "b" })).headers["x-stamp"])
  end)
  it("no consumer: the plugin that refuses ends the request before stamp runs", function()
    assert.equal(401, (get("s.test")))
  end)
end)`,
    )
    allPass(results, 3)
  })
})

describe("assert.logfile(): Kong's error.log of the requests", () => {
  it('has every plugin line in the error.log format; has.no.line; clean_logfile empties it', async () => {
    const results = await run(
      `${PRELUDE}
describe("logfile", function()
  lazy_setup(function()
    bp, db = helpers.get_db_utils("postgres", nil, { "badge", "boom" })
    route = bp.routes:insert({ hosts = { "l.test" } })
    local ann = bp.consumers:insert({ username = "ann" })
    bp.badges:insert({ consumer = { id = ann.id }, key = "a" })
    bp.plugins:insert({ name = "badge", route = { id = route.id } })
    bp.plugins:insert({ name = "boom", route = { id = bp.routes:insert({ hosts = { "boom.test" } }).id } })
    assert(helpers.start_kong({ plugins = "bundled,badge,boom" }))
    proxy = helpers.proxy_client()
  end)
  it("kong.log and ngx.log lines, with their level, file and plugin", function()
    helpers.clean_logfile()
    get("l.test", { ["x-badge"] = "zz" })
    get("l.test", { ["x-badge"] = "a" })
    assert.logfile().has.line("[warn]", true)
    assert.logfile().has.line([[\\[kong\\] handler\\.lua:\\d+ \\[badge\\] unknown badge zz, client: 127\\.0\\.0\\.1]])
    assert.logfile().has.line("badge ok for ann", true)
    assert.logfile().has.no.line("[error]", true)
    assert.errlog().has.line("^\\\\d{4}/\\\\d\\\\d/\\\\d\\\\d \\\\d\\\\d:\\\\d\\\\d:\\\\d\\\\d \\\\[notice\\\\] ")
  end)
  it("a plugin that fails writes Kong's [error] line", function()
    assert.equal(500, (get("boom.test")))
    assert.logfile().has.line("[error]", true)
    assert.logfile().has.line("access phase failed", true)
  end)
  it("a spec reading the file itself (pl.file.read of the prefix's error.log) reads the same lines", function()
    local f = assert(io.open(helpers.test_conf.prefix .. "/" .. helpers.test_conf.proxy_error_log, "r"))
    local text = f:read("a")
    f:close()
    assert.matches("unknown badge zz", text, 1, true)
  end)
  it("clean_logfile empties it", function()
    helpers.clean_logfile()
    assert.logfile().has.no.line("badge", true)
  end)
  it("a missing line fails the test with the lines it has", function()
    get("l.test", { ["x-badge"] = "zz" })
    assert.logfile().has.line("never written", true)
  end)
end)`,
      {
        'kong/plugins/boom/handler.lua': `return { PRIORITY = 5, VERSION = "1", access = function() error("kaboom") end }`,
        'kong/plugins/boom/schema.lua': emptySchema('boom'),
      },
    )
    expect(outcomes(results.slice(0, 4)).filter((o) => !o.startsWith('success'))).toEqual([])
    expect(results[4]!.status).toBe('failure')
    expect(results[4]!.message).toMatch(
      /^spec\/x_spec\.lua:\d+: Expected a line in servroot\/logs\/error\.log to match never written \(plain\); it has 1 lines:\n\d{4}\/\d\d\/\d\d .* \[warn\] .*unknown badge zz/,
    )
  })
})

describe('plugin phases after access', () => {
  it("a route's plugin with no access handler runs its header_filter (Kong collects every plugin in access)", async () => {
    const results = await run(
      `${PRELUDE}
describe("late", function()
  lazy_setup(function()
    bp = helpers.get_db_utils("postgres", nil, { "late" })
    route = bp.routes:insert({ hosts = { "late.test" } })
    bp.plugins:insert({ name = "late", route = { id = route.id } })
    assert(helpers.start_kong({ plugins = "bundled,late" }))
    proxy = helpers.proxy_client()
  end)
  it("marks the response", function()
    local r = assert(proxy:get("/request", { headers = { host = "late.test" } }))
    assert.equal("yes", assert.response(r).has.header("x-late"))
  end)
end)`,
      {
        'kong/plugins/late/handler.lua': `return { PRIORITY = 5, VERSION = "1", header_filter = function() kong.response.set_header("x-late", "yes") end }`,
        'kong/plugins/late/schema.lua': emptySchema('late'),
      },
    )
    allPass(results, 1)
  })
})

describe("Kong's TLS listener", () => {
  it('proxy_ssl_client reaches Kong over https on 9443: the scheme plugins read and the proxy headers', async () => {
    const results = await run(
      `${PRELUDE}
describe("tls", function()
  local tls
  lazy_setup(function()
    bp = helpers.get_db_utils("postgres", nil, { "scheme" })
    route = bp.routes:insert({ hosts = { "tls.test" } })
    local plain = bp.routes:insert({ hosts = { "plain.test" }, protocols = { "http" } })
    bp.plugins:insert({ name = "scheme", route = { id = route.id } })
    bp.plugins:insert({ name = "scheme", route = { id = plain.id } })
    assert(helpers.start_kong({ plugins = "bundled,scheme" }))
    proxy, tls = helpers.proxy_client(), helpers.proxy_ssl_client()
  end)
  it("https on the TLS listener", function()
    local status, body = get("tls.test")
    assert.equal(200, status)
    assert.equal("http 9000 http", body.headers["x-scheme"])
    assert.equal("http", body.headers["x-forwarded-proto"])
    local r = assert(tls:get("/request", { headers = { host = "tls.test" } }))
    body = cjson.decode(assert.res_status(200, r))
    assert.equal("https 9443 https", body.headers["x-scheme"])
    assert.equal("https", body.headers["x-forwarded-proto"])
    assert.equal("9443", body.headers["x-forwarded-port"])
  end)
  it("a route for http alone takes an https request (Kong's router does not match on http or https)", function()
    local r = assert(tls:get("/request", { headers = { host = "plain.test" } }))
    local body = cjson.decode(assert.res_status(200, r))
    assert.equal("https 9443 https", body.headers["x-scheme"])
  end)
end)`,
      {
        'kong/plugins/scheme/handler.lua': `return { PRIORITY = 5, VERSION = "1", access = function()
  kong.service.request.set_header("x-scheme", kong.request.get_scheme() .. " " .. kong.request.get_port() .. " " .. ngx.var.scheme)
end }`,
        'kong/plugins/scheme/schema.lua': emptySchema('scheme'),
      },
    )
    allPass(results, 2)
  })
})

describe("Kong's schema checks the specs lean on", () => {
  it('a conditional whose if_match names no type, and contains', async () => {
    const results = await run(
      `
local helpers = require "spec.helpers"
local schema = { name = "cond", fields = { { config = { type = "record",
  fields = {
    { algorithm = { type = "string", default = "HS256" } },
    { key = { type = "string" } },
    { claims = { type = "set", elements = { type = "string" }, default = {} } },
    { max = { type = "number", default = 0 } },
  },
  entity_checks = {
    { conditional = { if_field = "algorithm", if_match = { match_any = { patterns = { "^RS" } } },
                      then_field = "key", then_match = { required = true } } },
    { conditional = { if_field = "max", if_match = { gt = 0 }, then_field = "claims", then_match = { contains = "exp" } } },
  } } } } }
it("an algorithm the pattern does not match needs no key", function()
  assert.truthy(helpers.validate_plugin_config_schema({}, schema))
end)
it("one it matches does", function()
  local ok, err = helpers.validate_plugin_config_schema({ algorithm = "RS256" }, schema)
  assert.is_nil(ok)
  assert.same({ config = { key = "required field missing",
    ["@entity"] = { "failed conditional validation given value of field 'algorithm'" } } }, err)
end)
it("the schema's own entity checks answer at the top, the config record's under config", function()
  local two = { name = "two", fields = { { config = { type = "record",
    fields = { { a = { type = "string" } }, { b = { type = "string" } } },
    entity_checks = { { mutually_required = { "a", "b" } } } } } },
    entity_checks = { { at_least_one_of = { "config.a", "config.b" } } } }
  local _, top = helpers.validate_plugin_config_schema({}, two)
  assert.same({ ["@entity"] = { "at least one of these fields must be non-empty: 'config.a', 'config.b'" } }, top)
  local _, inner = helpers.validate_plugin_config_schema({ a = "x" }, two)
  assert.same({ config = { ["@entity"] = { "all or none of these fields must be set: 'a', 'b'" } } }, inner)
end)
it("contains", function()
  local ok, err = helpers.validate_plugin_config_schema({ max = 5, claims = { "nbf" } }, schema)
  assert.is_nil(ok)
  assert.same({ config = { claims = "expected to contain: exp",
    ["@entity"] = { "failed conditional validation given value of field 'max'" } } }, err)
  assert.truthy(helpers.validate_plugin_config_schema({ max = 5, claims = { "exp" } }, schema))
end)`,
    )
    allPass(results, 4)
  })

  it("auto fields, typedefs.ttl's bounds, and an entity schema's validate_insert, as oauth2's schema spec uses them", async () => {
    const results = await run(
      `
local helpers = require "spec.helpers"
local uuid = require "kong.tools.uuid"
local schema = require "kong.plugins.keyed.schema"
it("a config's auto field is filled when it is not given, and kept when it is", function()
  local plugin = assert(helpers.validate_plugin_config_schema({}, schema))
  assert.equal(32, #plugin.config.key)
  assert.not_equal(plugin.config.key, assert(helpers.validate_plugin_config_schema({}, schema)).config.key)
  assert.equal("mine", assert(helpers.validate_plugin_config_schema({ key = "mine" }, schema)).config.key)
  local bp = helpers.get_db_utils("postgres", nil, { "keyed" })
  assert.equal(32, #bp.plugins:insert({ name = "keyed" }).config.key)
end)
it("typedefs.ttl is between 0 and Kong's DAO_MAX_TTL", function()
  assert.equal(10, assert(helpers.validate_plugin_config_schema({}, schema)).config.ttl)
  local ok, err = helpers.validate_plugin_config_schema({ ttl = 100000001 }, schema)
  assert.is_nil(ok)
  assert.same({ config = { ttl = "value should be between 0 and 100000000" } }, err)
end)
it("an entity schema's validate_insert checks every field and fills none", function()
  local _, db = helpers.get_db_utils("postgres", nil, { "keyed" })
  local s = db.keyed_tickets.schema
  local ok, err = s:validate_insert({ owner = { id = "foo" }, seats = 1 })
  assert.falsy(ok)
  assert.same({ owner = { id = "expected a valid UUID" }, kind = "required field missing" }, err)
  assert.same({ seats = "expected an integer" }, select(2, s:validate_insert({ owner = { id = uuid.uuid() }, kind = "day", seats = 1.5 })))
  assert.is_true(s:validate_insert({ owner = { id = uuid.uuid() }, kind = "day", seats = 1 }))
end)`,
      {
        'kong/plugins/keyed/handler.lua': `return { PRIORITY = 5, VERSION = "1" }`,
        'kong/plugins/keyed/schema.lua': `local typedefs = require "kong.db.schema.typedefs"
return { name = "keyed", fields = { { config = { type = "record", fields = {
  { key = { type = "string", auto = true, required = true } },
  { ttl = typedefs.ttl { default = 10, required = true } },
} } } } }`,
        'kong/plugins/keyed/daos.lua': `local typedefs = require "kong.db.schema.typedefs"
return { { name = "keyed_tickets", primary_key = { "id" }, fields = {
  { id = typedefs.uuid },
  { created_at = typedefs.auto_timestamp_s },
  { owner = { type = "foreign", reference = "consumers", required = true } },
  { code = { type = "string", auto = true } },
  { kind = { type = "string", required = true, default = "day" } },
  { seats = { type = "integer", required = true } },
} } }`,
      },
    )
    allPass(results, 3)
  })

  it("Kong's blueprints for oauth2's codes and tokens fill what their tables require", async () => {
    const results = await run(
      `
local helpers = require "spec.helpers"
it("a token and a code from the blueprints alone", function()
  local bp = helpers.get_db_utils("postgres", nil, { "oauth2" })
  local cred = bp.oauth2_credentials:insert({ consumer = { id = bp.consumers:insert().id } })
  local token = bp.oauth2_tokens:insert({ credential = { id = cred.id } })
  assert.same({ "bearer", 1000000000, "default" }, { token.token_type, token.expires_in, token.scope })
  local c1 = bp.oauth2_authorization_codes:insert({ credential = { id = cred.id } })
  local c2 = bp.oauth2_authorization_codes:insert({ credential = { id = cred.id } })
  assert.same({ "oauth-code-1", "oauth-code-2", "default" }, { c1.code, c2.code, c1.scope })
end)`,
      {
        // the tables as Kong's oauth2 daos.lua defines them, in part (a badge root has no Kong checkout)
        'kong/plugins/oauth2/daos.lua': `local typedefs = require "kong.db.schema.typedefs"
return {
  { name = "oauth2_credentials", primary_key = { "id" }, endpoint_key = "client_id", fields = {
    { id = typedefs.uuid }, { created_at = typedefs.auto_timestamp_s },
    { consumer = { type = "foreign", reference = "consumers", required = true } },
    { name = { type = "string", required = true } },
    { client_id = { type = "string", required = false, unique = true, auto = true } },
    { client_secret = { type = "string", required = false, auto = true } } } },
  { name = "oauth2_authorization_codes", primary_key = { "id" }, ttl = true, fields = {
    { id = typedefs.uuid }, { created_at = typedefs.auto_timestamp_s },
    { credential = { type = "foreign", reference = "oauth2_credentials", required = true } },
    { code = { type = "string", required = false, unique = true, auto = true } },
    { scope = { type = "string" } } } },
  { name = "oauth2_tokens", primary_key = { "id" }, ttl = true, fields = {
    { id = typedefs.uuid }, { created_at = typedefs.auto_timestamp_s },
    { credential = { type = "foreign", reference = "oauth2_credentials", required = true } },
    { token_type = { type = "string", required = true, one_of = { "bearer" } } },
    { expires_in = { type = "integer", required = true } },
    { access_token = { type = "string", required = false, unique = true, auto = true } },
    { scope = { type = "string" } } } },
}`,
        'kong/plugins/oauth2/handler.lua': `return { PRIORITY = 1400, VERSION = "1" }`,
        'kong/plugins/oauth2/schema.lua': emptySchema('oauth2'),
      },
    )
    allPass(results, 1)
  })

  it("a map's values: its length is its keys, the first value that fails is the map's error", async () => {
    const results = await run(`
local helpers = require "spec.helpers"
-- a map of records, as response-ratelimiting's limits
local schema = { name = "m", fields = { { config = { type = "record", fields = {
  { limits = { type = "map", required = true, len_min = 1, keys = { type = "string" },
    values = { type = "record", required = true,
      fields = { { second = { type = "number" } }, { minute = { type = "number" } } },
      custom_validator = function(v)
        if v.second and v.minute and v.minute < v.second then return nil, "minute below second" end
        return true
      end } } },
} } } } }
it("an empty map is too short", function()
  local _, err = helpers.validate_plugin_config_schema({ limits = {} }, schema)
  assert.same({ config = { limits = "length must be at least 1" } }, err)
end)
it("a value's unknown field is named under the map", function()
  local _, err = helpers.validate_plugin_config_schema({ limits = { video = { seco = 1 } } }, schema)
  assert.same({ config = { limits = { seco = "unknown field" } } }, err)
end)
it("a value's own validator and type are the map's error", function()
  local _, err = helpers.validate_plugin_config_schema({ limits = { video = { second = 2, minute = 1 } } }, schema)
  assert.same({ config = { limits = "minute below second" } }, err)
  _, err = helpers.validate_plugin_config_schema({ limits = { second = 10 } }, schema)
  assert.same({ config = { limits = "expected a record" } }, err)
end)`)
    allPass(results, 3)
  })
})

describe('a spec calling what broker does not emulate', () => {
  it("fails that test only: the next request's plugins are not blamed for it", async () => {
    const results = await run(`${PRELUDE}
describe("socket", function()
  lazy_setup(function()
    bp = helpers.get_db_utils("postgres", nil, { "stamp" })
    route = bp.routes:insert({ hosts = { "t.test" } })
    bp.plugins:insert({ name = "stamp", config = { value = "v" } })
    assert(helpers.start_kong({ plugins = "bundled,stamp" }))
    proxy = helpers.proxy_client()
  end)
  it("opens a socket", function() ngx.req.socket() end)
  it("proxies after it", function() assert.equal(200, (get("t.test"))) end)
end)`)
    expect(results.map((r) => r.status)).toEqual(['error', 'success'])
    // ngx.socket.tcp and .udp are (real sockets, for a plugin's Redis or log server); the request's own is not
    expect(results[0]!.message).toContain('ngx.req.socket() is not emulated by broker')
  })
})

describe("the client behind proxies, as start_kong's trusted_ips and real_ip_header say", () => {
  it('X-Real-IP from a trusted peer is the client; X-Forwarded-For with real_ip_recursive', async () => {
    const results = await run(
      `${PRELUDE}
describe("real ip", function()
  it("without trusted_ips the peer is the client", function()
    bp = helpers.get_db_utils("postgres", nil, {})
    bp.routes:insert({ hosts = { "ip.test" } })
    assert(helpers.start_kong({}))
    proxy = helpers.proxy_client()
    local _, body = get("ip.test", { ["X-Real-IP"] = "10.1.1.1" })
    assert.equal("127.0.0.1", body.vars.remote_addr)
  end)
  it("X-Real-IP (Kong's default real_ip_header) from a trusted peer", function()
    assert(helpers.restart_kong({ trusted_ips = "0.0.0.0/0, ::/0" }))
    local _, body = get("ip.test", { ["X-Real-IP"] = "::1" })
    assert.equal("::1", body.vars.remote_addr)
    assert.equal("::1", body.headers["x-real-ip"])
  end)
  it("X-Forwarded-For, recursive: the leftmost when every hop is trusted", function()
    assert(helpers.restart_kong({ trusted_ips = "0.0.0.0/0", real_ip_header = "X-Forwarded-For", real_ip_recursive = "on" }))
    local _, body = get("ip.test", { ["X-Forwarded-For"] = "127.0.0.3, 10.0.0.1" })
    assert.equal("127.0.0.3", body.vars.remote_addr)
  end)
end)`,
    )
    allPass(results, 3)
  })
})

describe("a plugin's timers and its config's scope ids", () => {
  it('a timer with no delay runs once the request is answered, a delayed one once the clock passes it; the config carries route_id, __plugin_id and __key__', async () => {
    const results = await run(
      `${PRELUDE}
describe("counter", function()
  local plugin
  lazy_setup(function()
    bp = helpers.get_db_utils("postgres", nil, { "counter" })
    route = bp.routes:insert({ hosts = { "c.test" } })
    plugin = bp.plugins:insert({ name = "counter", route = { id = route.id } })
    assert(helpers.start_kong({ plugins = "bundled,counter" }))
    proxy = helpers.proxy_client()
  end)
  it("counts through its timer", function()
    local _, b1 = get("c.test")
    local _, b2 = get("c.test")
    assert.equal("0", b1.headers["x-count"])
    assert.equal("1", b2.headers["x-count"])
    assert.equal(route.id, b1.headers["x-route"])
    assert.equal(plugin.id, b1.headers["x-plugin"])
    assert.equal("plugins:counter:" .. route.id .. "::::", b1.headers["x-key"])
    assert.is_true(helpers.wait_timer("counter", true, "any-finish"))
  end)
  it("a delayed timer fires once the spec's clock has passed its delay", function()
    local _, b = get("c.test")
    assert.equal("2", b.headers["x-count"])
    assert.is_nil(ngx.shared.kong:get("late"))
    ngx.sleep(4)
    helpers.wait_timer()
    assert.is_nil(ngx.shared.kong:get("late"))
    ngx.sleep(1)
    helpers.wait_timer()
    assert.is_true(ngx.shared.kong:get("late"))
  end)
end)`,
      {
        'kong/plugins/counter/handler.lua': `
local timer_at = ngx.timer.at
local C = { PRIORITY = 10, VERSION = "1" }
function C:access(conf)
  local shm = ngx.shared.kong
  kong.service.request.set_header("x-count", tostring(shm:get("n") or 0))
  kong.service.request.set_header("x-route", conf.route_id)
  kong.service.request.set_header("x-plugin", conf.__plugin_id)
  kong.service.request.set_header("x-key", conf.__key__)
  timer_at(0, function(premature) shm:incr("n", 1, 0) end)
  timer_at(5, function() shm:set("late", true) end)
end
return C`,
        'kong/plugins/counter/schema.lua': emptySchema('counter'),
      },
    )
    allPass(results, 2)
  })
})

describe("the spec's clock", () => {
  it('stands still but for sleeps: ngx.now, os.time and a credential ttl read it; wait_until moves it on', async () => {
    const results = await run(`${PRELUDE}
describe("clock", function()
  lazy_setup(function()
    bp = helpers.get_db_utils("postgres", nil, { "badge" })
    route = bp.routes:insert({ hosts = { "ttl.test" } })
    bp.plugins:insert({ name = "badge", route = { id = route.id } })
    assert(helpers.start_kong({ plugins = "bundled,badge" }))
    proxy = helpers.proxy_client()
  end)
  it("does not move by itself; ngx.sleep moves ngx.now, ngx.time and os.time alike", function()
    local t0 = ngx.now()
    for _ = 1, 1e5 do end
    assert.equal(t0, ngx.now())
    ngx.sleep(90)
    assert.equal(t0 + 90, ngx.now())
    assert.equal(math.floor(t0 + 90), os.time())
    assert.equal(math.floor(t0 + 90), ngx.time())
  end)
  it("a credential inserted with a ttl is found until the ttl passes, and wait_until waits for it", function()
    local ann = bp.consumers:insert({ username = "ann" })
    bp.badges:insert({ key = "short", consumer = { id = ann.id } }, { ttl = 30 })
    local t0 = ngx.now()
    assert.equal(200, (get("ttl.test", { ["x-badge"] = "short" })))
    helpers.wait_until(function() return get("ttl.test", { ["x-badge"] = "short" }) == 401 end, 60)
    assert.is_true(ngx.now() - t0 >= 29)
    assert.is_true(ngx.now() - t0 <= 60)
  end)
  it("wait_until gives up once its timeout has passed on the clock", function()
    local t0 = ngx.now()
    local ok, err = pcall(helpers.wait_until, function() return false end, 3)
    assert.is_false(ok)
    assert.matches("timed out after 3 seconds", err)
    assert.equal(t0 + 3, ngx.now())
  end)
end)`)
    allPass(results, 3)
  })

  it('assert.eventually: tries until the condition holds on the clock, or fails saying why', async () => {
    const results = await run(`
require "spec.helpers"
describe("eventually", function()
  it("has_no_error once the function stops raising; the step moves the clock", function()
    local t0 = ngx.now()
    assert.with_timeout(15).with_step(0.5).ignore_exceptions(false).eventually(function()
      assert(ngx.now() - t0 >= 2, "too early")
    end).has_no_error("two seconds pass")
    assert.equal(t0 + 2, ngx.now())
  end)
  it("is_truthy and is_falsy; max_tries", function()
    local n = 0
    assert.eventually(function() n = n + 1 return n == 3 end).is_truthy()
    assert.equal(3, n)
    assert.eventually(function() return false end).is_falsy()
    local ok, err = pcall(function()
      assert.with_max_tries(4).eventually(function() return nil end).is_truthy("never")
    end)
    assert.is_false(ok)
    assert.matches("never: gave up after 4 tries", tostring(err))
  end)
  it("times out naming the last error; an error fails is_truthy at once unless ignored", function()
    local t0 = ngx.now()
    local _, err = pcall(function()
      assert.with_timeout(1).eventually(function() error("still broken") end).has_no_error("fixed")
    end)
    assert.matches("fixed: timed out after 1 seconds", tostring(err))
    assert.matches("still broken", tostring(err))
    assert.equal(t0 + 1, ngx.now())
    local _, raised = pcall(function() assert.eventually(function() error("boom") end).is_truthy() end)
    assert.matches("raised an error: .*boom", tostring(raised))
    local calls = 0
    assert.ignore_exceptions(true).eventually(function()
      calls = calls + 1
      if calls < 3 then error("not yet") end
      return true
    end).is_truthy()
    assert.equal(3, calls)
  end)
end)`)
    allPass(results, 3)
  })
})

describe("Kong's status assertion", () => {
  it('returns the body without its surrounding whitespace (an ngx.say line without its newline)', async () => {
    const results = await run(
      `${PRELUDE}
describe("status", function()
  lazy_setup(function()
    bp = helpers.get_db_utils("postgres", nil, { "say" })
    route = bp.routes:insert({ hosts = { "say.test" } })
    bp.plugins:insert({ name = "say", route = { id = route.id } })
    assert(helpers.start_kong({ plugins = "bundled,say" }))
    proxy = helpers.proxy_client()
  end)
  it("strips", function()
    local r = proxy:get("/", { headers = { host = "say.test" } })
    assert.equal("  said it\\n", r:read_body())
    assert.equal("said it", assert.res_status(200, r))
    assert.equal("said it", assert.response(r).has.status(200))
  end)
  it("kong.configuration shows start_kong's plugins and Kong's placeholder for the test Postgres password", function()
    assert.same({ "bundled", "say" }, kong.configuration.plugins)
    assert.equal("******", kong.configuration.pg_password)
  end)
end)`,
      {
        'kong/plugins/say/handler.lua': `
local S = { PRIORITY = 10, VERSION = "1" }
function S:access() ngx.say("  said it") return ngx.exit(200) end
return S`,
        'kong/plugins/say/schema.lua': emptySchema('say'),
      },
    )
    allPass(results, 2)
  })
})

describe('a client is one connection', () => {
  it("nginx's $connection numbers the clients, $connection_requests counts each one's requests", async () => {
    const results = await run(
      `${PRELUDE}
describe("conn", function()
  lazy_setup(function()
    bp = helpers.get_db_utils("postgres", nil, { "conn" })
    route = bp.routes:insert({ hosts = { "conn.test" } })
    bp.plugins:insert({ name = "conn", route = { id = route.id } })
    assert(helpers.start_kong({ plugins = "bundled,conn" }))
  end)
  it("counts", function()
    local function seen(c)
      local r = c:get("/", { headers = { host = "conn.test" } })
      return r.headers["x-conn"]
    end
    local a, b = helpers.proxy_client(), helpers.proxy_client()
    local one = seen(a)
    local first = tonumber(one:match("^(%d+)/"))
    assert.equal(first .. "/1", one)
    assert.equal(first .. "/2", seen(a))
    assert.equal((first + 1) .. "/1", seen(b))
    assert.equal(first .. "/3", seen(a))
  end)
end)`,
      {
        'kong/plugins/conn/handler.lua': `
local C = { PRIORITY = 10, VERSION = "1" }
function C:header_filter() kong.response.set_header("x-conn", ngx.var.connection .. "/" .. ngx.var.connection_requests) end
return C`,
        'kong/plugins/conn/schema.lua': emptySchema('conn'),
      },
    )
    allPass(results, 1)
  })
})

describe("the clients' bodies, as Kong's client encodes them", () => {
  it('a table body is JSON, a form or multipart by its Content-Type; without one, its array part joined', async () => {
    const results = await run(
      `${PRELUDE}
describe("bodies", function()
  lazy_setup(function()
    bp = helpers.get_db_utils("postgres", nil, { "ver" })
    bp.plugins:insert({ name = "ver", route = { id = bp.routes:insert({ hosts = { "b.test" } }).id } })
    assert(helpers.start_kong({ plugins = "bundled,ver" }))
    proxy = helpers.proxy_client()
  end)
  local function post(body, ctype)
    local r = assert(proxy:post("/anything", { headers = { host = "b.test", ["Content-Type"] = ctype }, body = body }))
    return cjson.decode(r:read_body()).post_data
  end
  it("json", function() assert.same({ n = 1 }, post({ n = 1 }, "application/json").params) end)
  it("Kong's request assertions: jsonbody gives params, data and kind; formparam reads multipart too", function()
    local r = assert(proxy:post("/anything", { headers = { host = "b.test", ["Content-Type"] = "application/json" },
      body = { n = 1 } }))
    assert.equal("b.test", assert.has.header("x-forwarded-host", cjson.decode(r:read_body())))
    local j = assert.request(r).has.jsonbody()
    assert.same({ n = 1 }, j.params)
    assert.equal("json", j.kind)
    r = assert(proxy:post("/anything", { headers = { host = "b.test", ["Content-Type"] = "multipart/form-data" },
      body = { who = "me" } }))
    assert.equal("me", assert.request(r).has.formparam("who"))
  end)
  it("form", function() assert.equal("a=b", post({ a = "b" }, "application/x-www-form-urlencoded").text) end)
  it("a request of version 1.0 is one to the plugins", function()
    local r = assert(proxy:send({ method = "GET", path = "/anything", version = 1.0, headers = { host = "b.test" } }))
    assert.equal("1", cjson.decode(r:read_body()).headers["x-version"])
  end)
  it("a chunked body the spec framed itself arrives as its data", function()
    local r = assert(proxy:send({ method = "GET", path = "/anything", body = "3\\r\\nabc\\r\\n2\\r\\nde\\r\\n0\\r\\n\\r\\n",
      headers = { host = "b.test", ["Transfer-Encoding"] = "chunked" } }))
    assert.equal("abcde", cjson.decode(r:read_body()).post_data.text)
  end)
  it("none", function()
    assert.equal("", post({ n = 1 }).text)
    assert.equal("ab", post({ "a", "b" }).text)
  end)
end)`,
      {
        'kong/plugins/ver/handler.lua': `return { PRIORITY = 1, VERSION = "1", access = function()
  kong.service.request.set_header("x-version", tostring(kong.request.get_http_version())) end }`,
        'kong/plugins/ver/schema.lua': emptySchema('ver'),
      },
    )
    allPass(results, 6)
  })
})

describe("the rocks Kong's plugins require", () => {
  it('multipart: parts by name, changed and written back', async () => {
    const results = await run(`
local multipart = require "multipart"
local body = "--XX\\r\\nContent-Disposition: form-data; name=\\"a\\"\\r\\n\\r\\none\\r\\n"
  .. "--XX\\r\\nContent-Disposition: form-data; name=\\"b\\"\\r\\n\\r\\ntwo\\r\\n--XX--\\r\\n"
it("reads, sets, deletes and writes", function()
  local m = multipart(body, "multipart/form-data; boundary=XX")
  assert.equal("one", m:get("a").value)
  assert.same({ a = "one", b = "two" }, m:get_all())
  m:set_simple("a", "uno")
  m:set_simple("c", "tres")
  m:delete("b")
  assert.equal("--XX\\r\\nContent-Disposition: form-data; name=\\"a\\"\\r\\n\\r\\nuno\\r\\n"
    .. "--XX\\r\\nContent-Disposition: form-data; name=\\"c\\"\\r\\n\\r\\ntres\\r\\n--XX--\\r\\n", m:tostring())
  assert.is_nil(multipart("", "multipart/form-data; boundary=XX"):get("a"))
end)`)
    allPass(results, 1)
  })
})

describe("Kong's test blueprints", () => {
  it("fill in what Kong's blueprints do; a row with transformations comes back as stored, read once by plugins", async () => {
    const results = await run(
      `${PRELUDE}
describe("bp", function()
  lazy_setup(function()
    bp, db = helpers.get_db_utils("postgres", nil, { "badge", "locker" })
    assert(helpers.start_kong({ plugins = "bundled,badge,locker" }))
    admin = helpers.admin_client()
  end)
  it("numbered consumers and <plugin>_plugins", function()
    local c = bp.consumers:insert()
    assert.equal("consumer-username-1", c.username)
    assert.equal("consumer-id-1", c.custom_id)
    assert.equal("bob", bp.consumers:insert({ username = "bob" }).username)
    assert.equal("stamp", bp.stamp_plugins:insert({ config = { value = "v" } }).name)
  end)
  it("a transformed field: bp, db and the Admin API give the stored value; kong.db does not transform it twice", function()
    local c = bp.consumers:insert({ username = "kim" })
    local row = bp.lockers:insert({ consumer = { id = c.id }, secret = "s" })
    assert.equal("h:s", row.secret)
    assert.equal("h:s", db.lockers:select({ id = row.id }).secret)
    assert.equal("h:s", select(2, call("GET", "/lockers/" .. row.id)).secret)
    route = bp.routes:insert({ hosts = { "lock.test" } })
    bp.plugins:insert({ name = "locker", route = { id = route.id } })
    proxy = helpers.proxy_client()
    assert.equal("h:s", select(2, get("lock.test")).headers["x-secret"])
  end)
end)`,
      {
        'kong/plugins/locker/daos.lua': `return { {
  name = "lockers", primary_key = { "id" }, admin_api_name = "lockers",
  fields = {
    { id = { type = "string", uuid = true, auto = true } },
    { consumer = { type = "foreign", reference = "consumers", required = true } },
    { secret = { type = "string", required = true } },
  },
  transformations = { { input = { "secret" }, on_write = function(s) return { secret = "h:" .. s } end } },
} }`,
        'kong/plugins/locker/handler.lua': `return { PRIORITY = 1, VERSION = "1", access = function()
  for row in kong.db.lockers:each() do kong.service.request.set_header("x-secret", row.secret) end
end }`,
        'kong/plugins/locker/schema.lua': emptySchema('locker'),
      },
    )
    allPass(results, 2)
  })
})

describe('JS plugins beside Lua ones', () => {
  it('a kong-js-pdk plugin in js-plugins/ runs in PRIORITY order with the Lua plugins, scoped as they are', async () => {
    const results = await run(
      `${PRELUDE}
describe("js", function()
  lazy_setup(function()
    bp = helpers.get_db_utils("postgres", nil, { "order", "js-order" })
    route = bp.routes:insert({ hosts = { "js.test" } })
    bp.plugins:insert({ name = "order" })
    bp.plugins:insert({ name = "js-order", route = { id = route.id }, config = { value = "js" } })
    assert(helpers.start_kong({ plugins = "bundled,order,js-order" }))
    proxy = helpers.proxy_client()
  end)
  it("the JS plugin (Priority 1000) runs before the Lua one (PRIORITY 800)", function()
    local r = assert(proxy:get("/request", { headers = { host = "js.test" } }))
    assert.equal("js,lua", assert.response(r).has.header("x-order"))
  end)
  it("its route scope holds", function()
    bp.routes:insert({ hosts = { "other.test" } })
    local r = assert(proxy:get("/request", { headers = { host = "other.test" } }))
    assert.equal("lua", assert.response(r).has.header("x-order"))
  end)
end)`,
      {
        'js-plugins/js-order.js': `'use strict'
class Order {
  constructor(conf) { this.value = conf.value }
  async access(kong) { await kong.ctx.shared.set('order', this.value) }
}
module.exports = { Plugin: Order, Schema: [{ value: { type: 'string' } }], Version: '1.0.0', Priority: 1000 }`,
        'kong/plugins/order/handler.lua': `return { PRIORITY = 800, VERSION = "1", access = function()
  local had = kong.ctx.shared.order
  kong.response.set_header("x-order", (had and had .. "," or "") .. "lua")
end }`,
        'kong/plugins/order/schema.lua': emptySchema('order'),
      },
    )
    allPass(results, 2)
  })
})

describe("Kong's typedefs as plugin schemas use them", () => {
  it("a header name of other characters is refused with Kong's message", async () => {
    const results = await run(`
local helpers = require "spec.helpers"
local typedefs = require "kong.db.schema.typedefs"
local schema = { name = "h", fields = { { config = { type = "record", fields = {
  { names = { type = "array", elements = typedefs.header_name } } } } } } }
it("refuses", function()
  local _, err = helpers.validate_plugin_config_schema({ names = { "ok-name_1", "hello\\\\world" } }, schema)
  assert.same({ config = { names = { [2] = "bad header name 'hello\\\\world', allowed characters are A-Z, a-z, 0-9, '_', and '-'" } } }, err)
end)`)
    allPass(results, 1)
  })
})

describe("broker's own failures", () => {
  it('a request Kong in process cannot answer fails that spec line naming it, and the run goes on', async () => {
    const results = await run(`
it("sends a request without a path", function()
  local answer = coroutine.yield("host", "proxy", { method = "GET", db = {} })
  assert.matches("^broker failed to answer this request %(proxy%): ", answer.raise)
end)
it("runs after it", function() assert.is_true(true) end)`)
    allPass(results, 2)
  })
})

describe('hybrid mode (a control plane and a data plane, one Kong in process)', () => {
  it("the data plane proxies on its own listeners with the control plane's configuration, and stops alone", async () => {
    const results = await run(`
local helpers = require "spec.helpers"
describe("hybrid", function()
  local route
  lazy_setup(function()
    local bp = helpers.get_db_utils("postgres", nil, { "badge" })
    route = bp.routes:insert({ hosts = { "dp.test" } })
  end)
  lazy_teardown(function() helpers.stop_kong("servroot2") helpers.stop_kong() end)
  it("a data plane needs its control plane", function()
    local ok, err = helpers.start_kong({ role = "data_plane", database = "off", prefix = "servroot2" })
    assert.is_nil(ok)
    assert.matches("start the one with role 'control_plane' first", err, 1, true)
  end)
  it("proxies on its listeners, ready at once, with what the control plane's Admin API wrote", function()
    assert(helpers.start_kong({ role = "control_plane", database = "postgres", cluster_listen = "127.0.0.1:9005",
      plugins = "bundled,badge" }))
    assert(helpers.start_kong({ role = "data_plane", database = "off", prefix = "servroot2",
      proxy_listen = "0.0.0.0:9002", status_listen = "127.0.0.1:9100", cluster_rpc_sync = "on" }))
    assert.logfile("servroot2/logs/error.log").has.line("[kong.sync.v2] full sync ends", true, 1)
    assert.equal("servroot2/logs/error.log", helpers.get_running_conf("servroot2").nginx_err_logs)
    assert.res_status(200, helpers.http_client("127.0.0.1", 9100):get("/status/ready"))
    local admin = helpers.admin_client()
    assert.res_status(201, admin:post("/plugins", { headers = { ["Content-Type"] = "application/json" },
      body = { name = "badge", route = { id = route.id } } }))
    local res = helpers.http_client("127.0.0.1", 9002):get("/", { headers = { host = "dp.test" } })
    assert.same({ message = "no badge" }, require("cjson").decode(assert.res_status(401, res)))
  end)
  it("stopping the data plane's prefix stops it alone", function()
    helpers.stop_kong("servroot2")
    assert.has_error(function() helpers.http_client("127.0.0.1", 9002) end)
    assert.res_status(200, helpers.admin_client():get("/"))
  end)
end)`)
    allPass(results, 3)
  })
})

describe("spec.hybrid's run_for_each_deploy", () => {
  it('runs the body in the traditional deploy and in three hybrid ones, each started and stopped whole', async () => {
    const results = await run(`
local seen = {}
require("spec.hybrid").run_for_each_deploy({}, function(helpers, strategy, deploy, rpc, rpc_sync)
  describe("deploy " .. helpers.format_tags(), function()
    lazy_setup(function()
      local bp = helpers.get_db_utils(strategy, nil, { "badge" })
      local route = bp.routes:insert({ hosts = { "each.test" } })
      bp.plugins:insert({ name = "badge", route = { id = route.id } })
      assert(helpers.start_kong({ plugins = "bundled,badge" }))
    end)
    lazy_teardown(function() helpers.stop_kong() end)
    it("proxies through the deploy's Kong", function()
      seen[#seen + 1] = helpers.format_tags()
      local proxy = helpers.proxy_client()
      assert.res_status(401, proxy:get("/", { headers = { host = "each.test" } }))
      proxy:close()
      if deploy == "hybrid" then
        assert.equal("servroot2", helpers.get_prefix_for("data_plane"))
        assert.equal("servroot", helpers.get_prefix_for("control_plane"))
        assert.equal("servroot2/logs/error.log", helpers.data_plane.nginx_err_logs)
        assert.equal("servroot", helpers.control_plane.prefix)
        assert.has_error(function() helpers.start_kong({ prefix = "mine" }) end)
      else
        assert.equal("servroot", helpers.get_prefix_for())
        assert.is_nil(helpers.control_plane)
      end
    end)
  end)
end)
it("ran each deploy once", function()
  assert.same({ "#postgres #traditional", "#postgres #hybrid", "#postgres #hybrid #rpc", "#postgres #hybrid #rpc #rpc_sync" }, seen)
end)`)
    allPass(results, 5)
  })
})

describe("a started Kong's own listeners and its balancer", () => {
  it('status_listen, proxy_listen and the test proxy port answer http_client and resty.http; a service on an upstream entity reaches its target', async () => {
    const results = await run(`
local helpers = require "spec.helpers"
describe("listeners", function()
  lazy_setup(function()
    local bp = helpers.get_db_utils("postgres", nil, { "badge" })
    local up = bp.upstreams:insert({ name = "my_upstream" })
    bp.targets:insert({ upstream = { id = up.id }, target = helpers.mock_upstream_host .. ":" .. helpers.mock_upstream_port })
    local balanced = bp.services:insert({ host = "my_upstream" })
    bp.routes:insert({ hosts = { "balanced.test" }, service = balanced })
    local tls = bp.services:insert({ host = helpers.mock_upstream_ssl_host, port = helpers.mock_upstream_ssl_port,
      protocol = "https" })
    bp.routes:insert({ hosts = { "tls.test" }, service = tls })
    assert(helpers.start_kong({ status_listen = "127.0.0.1:9542", proxy_listen = "0.0.0.0:8000" }))
  end)
  lazy_teardown(function() helpers.stop_kong() end)
  it("the status API answers on status_listen", function()
    assert.res_status(200, helpers.http_client("127.0.0.1", 9542):get("/status/ready"))
  end)
  it("the proxy answers on proxy_listen; an upstream entity's target is the mock upstream", function()
    local r = helpers.http_client("127.0.0.1", 8000):get("/request", { headers = { host = "balanced.test" } })
    assert.request(r).has.header("x-forwarded-host")
    assert.res_status(200, r)
  end)
  it("the mock upstream's TLS port answers as the mock upstream", function()
    assert.res_status(200, helpers.proxy_client():get("/request", { headers = { host = "tls.test" } }))
  end)
  it("Kong's test proxy port answers http_client and lua-resty-http, request after request", function()
    assert.res_status(200, helpers.http_client("127.0.0.1", helpers.get_proxy_port()):get("/request",
      { headers = { host = "balanced.test" } }))
    for _ = 1, 2 do
      local httpc = require("resty.http").new()
      assert(httpc:connect({ scheme = "http", host = helpers.mock_upstream_host, port = helpers.get_proxy_port() }))
      local res = assert(httpc:request({ path = "/request", headers = { host = "balanced.test" } }))
      assert.equal(200, res.status)
      assert.matches('"host":"', res:read_body(), 1, true)
    end
    local res = assert(require("resty.http").new():request_uri("http://127.0.0.1:" .. helpers.get_proxy_port()
      .. "/request", { headers = { host = "balanced.test" } }))
    assert.equal(200, res.status)
  end)
  it("a port no listener has is still refused, and none answers once Kong stops", function()
    assert.has_error(function() helpers.http_client("127.0.0.1", 9543) end)
    helpers.stop_kong()
    assert.has_error(function() helpers.http_client("127.0.0.1", 9542) end)
    local _, err = require("resty.http").new():request_uri("http://127.0.0.1:" .. helpers.get_proxy_port() .. "/")
    assert.equal("connection refused", err)
  end)
end)`)
    allPass(results, 5)
  })
})
