import { describe, it } from 'vitest'
import { allPass, runSpec } from './testing/specs.js'

// What Kong's authentication plugin specs (key-auth, basic-auth, jwt, hmac-auth, acl) lean on, on specs of our
// own in Kong's style: a credential DAO with a ttl, a transformation and a conditional check (the `pass`
// plugin below), Kong's node cache across requests, its warmup, and kong.db.declarative.
const PASS_FILES: Record<string, string> = {
  'kong/plugins/pass/handler.lua': `
local Pass = { PRIORITY = 1240, VERSION = "1.0.0" }
-- as key-auth does: the row is cached for the seconds its ttl has left
local function load(key)
  local cred = kong.db.passes:select_by_key(key)
  return cred, nil, cred and cred.ttl
end
function Pass:access()
  local key = kong.request.get_header("x-pass")
  local cred = key and kong.cache:get(kong.db.passes:cache_key(key), nil, load, key)
  if not cred then return kong.response.exit(401, { message = "no pass" }) end
  kong.service.request.set_header("x-pass-kind", cred.kind)
end
return Pass`,
  'kong/plugins/pass/schema.lua': `
return { name = "pass", fields = { { config = { type = "record", fields = {} } } } }`,
  'kong/plugins/pass/daos.lua': `
local typedefs = require "kong.db.schema.typedefs"
return { {
  name = "passes", primary_key = { "id" }, endpoint_key = "key", cache_key = { "key" }, ttl = true,
  admin_api_name = "passes", admin_api_nested_name = "pass",
  fields = {
    { id = typedefs.uuid },
    { created_at = typedefs.auto_timestamp_s },
    { consumer = { type = "foreign", reference = "consumers", required = true, on_delete = "cascade" } },
    { key = { type = "string", required = false, unique = true, auto = true } },
    { kind = { type = "string", default = "day" } },
    { pin = { type = "string" } },
    { note = { type = "string" } },
  },
  entity_checks = {
    { conditional = { if_field = "kind", if_match = { eq = "vip" }, then_field = "note", then_match = { required = true } } },
  },
  transformations = { {
    input = { "pin" }, needs = { "consumer.id" },
    on_write = function(pin, consumer_id) return { pin = ngx.md5(consumer_id .. pin) } end,
  } },
} }`,
}

const run = (spec: string) => runSpec(spec, PASS_FILES)

const PRELUDE = `
local helpers = require "spec.helpers"
local cjson = require "cjson"
local bp, db, admin, proxy, ann, bob
local function call(method, path, body, headers)
  headers = headers or (type(body) == "table" and { ["Content-Type"] = "application/json" } or nil)
  local r = assert(admin:send { method = method, path = path, body = body, headers = headers })
  local text = r:read_body()
  return r.status, text ~= "" and cjson.decode(text) or nil
end
local function get(key)
  local r = assert(proxy:get("/request", { headers = { host = "pass.test", ["x-pass"] = key } }))
  return r.status, cjson.decode((r:read_body()))
end
local function setup()
  bp, db = helpers.get_db_utils("postgres", nil, { "pass" })
  local route = bp.routes:insert({ hosts = { "pass.test" } })
  bp.plugins:insert({ name = "pass", route = { id = route.id } })
  ann = bp.consumers:insert({ username = "ann" })
  bob = bp.consumers:insert({ username = "bob" })
  assert(helpers.start_kong({ plugins = "bundled,pass" }))
  admin, proxy = helpers.admin_client(), helpers.proxy_client()
end
`

describe("the Admin API on a credential DAO, as Kong's auth plugins' API specs use it", () => {
  it('ttl, PUT by endpoint key, transformations and conditional checks answer as Kong does', async () => {
    const results = await run(`${PRELUDE}
describe("credentials", function()
  lazy_setup(setup)
  it("a credential posted with a ttl is gone once the ttl passes on the spec's clock", function()
    local status, cred = call("POST", "/consumers/ann/pass", { ttl = 1 })
    assert.equal(201, status)
    assert.equal(200, (call("GET", "/consumers/ann/pass/" .. cred.id)))
    ngx.sleep(3)
    assert.equal(404, (call("GET", "/consumers/ann/pass/" .. cred.id)))
  end)
  it("its ttl reads as the seconds it has left", function()
    -- Kong's is floor(created_at + ttl - now): created_at is whole seconds, the clock is not
    local _, cred = call("POST", "/consumers/ann/pass", { ttl = 10 })
    assert.equal(math.floor(cred.created_at + 10 - ngx.now()), cred.ttl)
    ngx.sleep(4)
    assert.equal(cred.ttl - 4, select(2, call("GET", "/consumers/ann/pass/" .. cred.id)).ttl)
    assert.equal(cred.ttl - 4, db.passes:select({ id = cred.id }).ttl)
    ngx.sleep(6)
    assert.equal(0, #select(2, call("GET", "/consumers/ann/pass")).data)
  end)
  it("PUT by endpoint key on a credential that exists keeps its key", function()
    assert.equal(200, (call("PUT", "/consumers/ann/pass/p-1", { kind = "day" })))
    local status, body = call("PUT", "/consumers/ann/pass/p-1", { kind = 5 })
    assert.equal(400, status)
    assert.same({ kind = "expected a string" }, body.fields)
    local s2, cred = call("PUT", "/consumers/ann/pass/p-1", { kind = "week" })
    assert.equal(200, s2)
    assert.equal("p-1", cred.key)
    assert.equal("week", cred.kind)
  end)
  it("a PATCH moving a transformed credential to another consumer must give its input again", function()
    local _, cred = call("POST", "/consumers/ann/pass", { key = "p-2", pin = "1234" })
    assert.equal(ngx.md5(ann.id .. "1234"), cred.pin)
    local status, body = call("PATCH", "/passes/p-2", { consumer = { id = bob.id } })
    assert.equal(400, status)
    assert.equal("schema violation (all or none of these fields must be set: 'pin', 'consumer.id')", body.message)
    local s2, moved = call("PATCH", "/passes/p-2", { consumer = { id = bob.id }, pin = "99" })
    assert.equal(200, s2)
    assert.equal(ngx.md5(bob.id .. "99"), moved.pin)
    -- nested, the consumer comes from the URL; bare, the pin alone moves what it needs (Kong refuses it too)
    assert.equal(200, (call("PATCH", "/consumers/bob/pass/p-2", { pin = "42" })))
    assert.equal(400, (call("PATCH", "/passes/p-2", { pin = "42" })))
  end)
  it("a failed conditional check names its field and the entity", function()
    local status, body = call("POST", "/consumers/ann/pass", { kind = "vip" })
    assert.equal(400, status)
    assert.same({ note = "required field missing",
      ["@entity"] = { "failed conditional validation given value of field 'kind'" } }, body.fields)
  end)
  it("a field the credential has no value for is null, as Kong's Admin API reads rows (nulls = true)", function()
    local status, cred = call("POST", "/consumers/bob/pass", { key = "n-1" })
    assert.equal(201, status)
    assert.equal(ngx.null, cred.note)
    assert.equal(ngx.null, cred.pin)
    assert.equal("day", cred.kind)
    assert.equal(ngx.null, select(2, call("GET", "/passes/n-1")).note)
    assert.equal(ngx.null, select(2, call("PATCH", "/passes/n-1", { kind = "week" })).note)
    assert.equal(ngx.null, select(2, call("GET", "/consumers/bob/pass")).data[1].note)
    assert.is_nil(db.passes:select({ id = cred.id }).note)
  end)
  it("a table form body is sent as Kong's client sends it: its values as given, not encoded again", function()
    local status, cred = call("POST", "/consumers/ann/pass", { key = "p-3", note = "two%0D%0Alines+and%2Bplus" },
      { ["Content-Type"] = "application/x-www-form-urlencoded" })
    assert.equal(201, status)
    assert.equal("two\\r\\nlines and+plus", cred.note)
  end)
end)`)
    allPass(results, 7)
  })
})

describe("a row's ttl as Kong's postgres strategy keeps it", () => {
  it('is a moment of expiry: an update leaves it, an update with a ttl sets it again from now', async () => {
    const results = await run(`${PRELUDE}
describe("ttl", function()
  lazy_setup(setup)
  it("an update of created_at alone does not move when the row goes", function()
    local cred = assert(db.passes:insert({ consumer = { id = ann.id }, key = "t-1" }, { ttl = 10 }))
    assert(db.passes:update({ id = cred.id }, { created_at = 123 }))
    assert.equal(200, (get("t-1")))
    local left = db.passes:select({ id = cred.id }).ttl
    assert.is_true(left >= 9 and left <= 10, "ttl left: " .. tostring(left))
    ngx.sleep(11)
    assert.is_nil(db.passes:select({ id = cred.id }))
  end)
  it("an update given a ttl counts it from the update", function()
    local cred = assert(db.passes:insert({ consumer = { id = ann.id }, key = "t-2" }, { ttl = 10 }))
    ngx.sleep(5)
    local updated = assert(db.passes:update({ id = cred.id }, { note = "renewed" }, { ttl = 100 }))
    assert.is_true(updated.ttl >= 99 and updated.ttl <= 100, "ttl left: " .. tostring(updated.ttl))
    ngx.sleep(20)
    assert.equal("renewed", db.passes:select({ id = cred.id }).note)
    assert.equal(200, (get("t-2")))
  end)
end)`)
    allPass(results, 2)
  })
})

describe("Kong's node cache in process", () => {
  it('outlives a request; a change to the database purges it; a cached ttl runs out', async () => {
    const results = await run(`${PRELUDE}
describe("cache", function()
  lazy_setup(setup)
  it("a credential a request loaded is still cached after a request that found none", function()
    bp.passes:insert({ key = "c-1", consumer = { id = ann.id } })
    assert.equal(200, (get("c-1")))
    assert.equal(401, (get("c-2")))
    local key = db.passes:cache_key("c-1")
    assert.equal(200, (call("GET", "/cache/" .. key)))
  end)
  it("a change through the Admin API is what the next request sees", function()
    local _, cred = call("GET", "/passes/c-1")
    assert.equal(200, (call("PATCH", "/consumers/ann/pass/" .. cred.id, { key = "c-2" })))
    assert.equal(401, (get("c-1")))
    assert.equal(200, (get("c-2")))
  end)
  it("a credential cached with its ttl is refused once the ttl passes", function()
    bp.passes:insert({ key = "c-3", consumer = { id = ann.id } }, { ttl = 5 })
    assert.equal(200, (get("c-3")))
    ngx.sleep(6)
    assert.equal(401, (get("c-3")))
  end)
  it("start_kong's db_cache_warmup_entities puts every row in the cache before a request", function()
    assert(helpers.restart_kong({ plugins = "bundled,pass", db_cache_warmup_entities = "passes,consumers" }))
    assert.equal(200, (call("GET", "/cache/" .. db.passes:cache_key("c-2"))))
    assert.equal(200, (call("GET", "/cache/" .. db.consumers:cache_key(ann.id))))
  end)
end)`)
    allPass(results, 4)
  })
})

describe("a plugin's own write in a request", () => {
  it("invalidates that row's cache keys, as Kong's crud event does, and nothing else", async () => {
    const results = await runSpec(
      `${PRELUDE}
describe("crud", function()
  lazy_setup(function()
    bp, db = helpers.get_db_utils("postgres", nil, { "pass", "tally" })
    local route = bp.routes:insert({ hosts = { "pass.test" } })
    bp.plugins:insert({ name = "pass", route = { id = route.id } })
    bp.plugins:insert({ name = "tally", route = { id = route.id } })
    ann = bp.consumers:insert({ username = "ann" })
    assert(helpers.start_kong({ plugins = "bundled,pass,tally" }))
    admin, proxy = helpers.admin_client(), helpers.proxy_client()
  end)
  local function tally(key, note)
    local r = assert(proxy:get("/request", { headers = { host = "pass.test", ["x-pass"] = key, ["x-note"] = note } }))
    return r.status, cjson.decode((r:read_body())).headers["x-tally"]
  end
  it("a credential cached by the same request stays cached; the row written is read again", function()
    bp.passes:insert({ key = "w-1", consumer = { id = ann.id } })
    assert.same({ 200, "new" }, { tally("w-1", "n-1") })
    assert.equal(200, (call("GET", "/cache/" .. db.passes:cache_key("w-1"))))
    assert.same({ 200, "seen" }, { tally("w-1", "n-1") })
    assert.equal(1, #db.tallies:page())
  end)
  it("a write through the Admin API is seen by the next request", function()
    assert.equal(200, (call("PATCH", "/passes/w-1", { kind = "week" })))
    local status, body = get("w-1")
    assert.equal(200, status)
    assert.equal("week", body.headers["x-pass-kind"])
  end)
end)`,
      {
        ...PASS_FILES,
        // records each note it sees once, looking it up through the node cache first (a miss is cached too)
        'kong/plugins/tally/handler.lua': `
local Tally = { PRIORITY = 900, VERSION = "1.0.0" }
function Tally:access()
  local note = kong.request.get_header("x-note")
  if not note then return end
  local row = kong.cache:get(kong.db.tallies:cache_key(note), nil, function() return kong.db.tallies:select_by_note(note) end)
  if not row then assert(kong.db.tallies:insert({ note = note })) end
  kong.service.request.set_header("x-tally", row and "seen" or "new")
end
return Tally`,
        'kong/plugins/tally/schema.lua': `
return { name = "tally", fields = { { config = { type = "record", fields = {} } } } }`,
        'kong/plugins/tally/daos.lua': `
local typedefs = require "kong.db.schema.typedefs"
return { { name = "tallies", primary_key = { "id" }, cache_key = { "note" }, generate_admin_api = false,
  fields = { { id = typedefs.uuid }, { created_at = typedefs.auto_timestamp_s },
    { note = { type = "string", required = true, unique = true } } } } }`,
      },
    )
    allPass(results, 2)
  })
})

describe('kong.db.declarative', () => {
  it('load_into_db puts entities in the database, transformed or as Kong stored them', async () => {
    const results = await run(`${PRELUDE}
local declarative = require "kong.db.declarative"
describe("declarative", function()
  local consumer = { id = "ad06b77c-0d2f-407a-8d6d-07f272a92d6a", username = "cy", _tags = ngx.null }
  local service = { id = "3b9c2302-a610-4925-a7b9-25942309335d", name = "s", host = helpers.mock_upstream_hostname,
    port = helpers.mock_upstream_port, protocol = "http", path = ngx.null }
  local route = { id = "eb88ccb8-274d-4e7e-b4cb-0d673a4fa93b", name = "r", paths = { "/status/200" },
    protocols = { "http" }, hosts = ngx.null, service = { id = service.id } }
  local plugin = { id = "389ad9bd-b158-4e19-aed7-c9b040f7f312", name = "pass", service = { id = service.id } }
  lazy_setup(function()
    local _
    _, db = helpers.get_db_utils("postgres", nil, { "pass" })
    assert(declarative.load_into_db({
      consumers = { [consumer.id] = consumer }, services = { [service.id] = service },
      routes = { [route.id] = route }, plugins = { [plugin.id] = plugin },
      passes = { a = { id = "caa33a6f-8e6b-4b02-9f55-0e2cffd26fb1", key = "d-1", pin = "7", consumer = { id = consumer.id } } },
    }, { _transform = true }))
    assert(declarative.load_into_db({
      passes = { b = { id = "caa33a6f-8e6b-4b02-9f55-0e2cffd26fb2", key = "d-2", pin = "stored", consumer = { id = consumer.id } } },
    }, { _transform = false }))
    assert(helpers.start_kong({ plugins = "bundled,pass" }))
    proxy = helpers.proxy_client()
  end)
  it("imports them with their ids and associations", function()
    assert.equal(consumer.id, db.consumers:select_by_username("cy").id)
    assert.equal(service.id, db.routes:select_by_name("r").service.id)
    assert.equal(ngx.md5(consumer.id .. "7"), db.passes:select_by_key("d-1").pin)
    assert.equal("stored", db.passes:select_by_key("d-2").pin)
  end)
  it("the next request is routed and authenticated by them", function()
    local r = assert(proxy:get("/status/200", { headers = { ["x-pass"] = "d-2" } }))
    assert.equal(200, r.status)
    assert.equal(401, assert(proxy:get("/status/200")).status)
  end)
  it("an entity Kong would refuse is nil and the error", function()
    local ok, err = declarative.load_into_db({ passes = { x = { key = "d-3" } } }, { _transform = true })
    assert.is_nil(ok)
    assert.matches("consumer: required field missing", err, 1, true)
  end)
end)`)
    allPass(results, 3)
  })
})

describe('a declarative config: make_yaml_file and start_kong{ declarative_config }', () => {
  it("replaces the database with the file's entities, nested and referenced by name as Kong reads them", async () => {
    const results = await run(`${PRELUDE}
describe("dbless", function()
  lazy_setup(function()
    bp, db = helpers.get_db_utils("off", nil, { "pass" })
    bp.consumers:insert({ username = "gone" })
    local file = helpers.make_yaml_file([[
_format_version: "3.0"
_transform: true
services:
- name: mock            # the mock upstream
  url: http://127.0.0.1:15555
  routes:
  - name: r1
    hosts: [ "pass.test", "other.test" ]
    paths:
      - /
  plugins:
  - name: pass
consumers:
- username: dee
  custom_id: "007"
  passes:
  - key: 'y-1'
    pin: "12"
- username: eve
plugins:
- name: stamp
  consumer: eve
  config: { value: "from-yaml" }
]])
    assert(helpers.start_kong({ database = "off", declarative_config = file, plugins = "bundled,pass,stamp" }))
    admin, proxy = helpers.admin_client(), helpers.proxy_client()
  end)
  it("the database holds the file's entities only", function()
    assert.is_nil(db.consumers:select_by_username("gone"))
    local dee = db.consumers:select_by_username("dee")
    assert.equal("007", dee.custom_id)
    assert.equal(dee.id, db.passes:select_by_key("y-1").consumer.id)
    assert.equal(ngx.md5(dee.id .. "12"), db.passes:select_by_key("y-1").pin)
    assert.equal(db.services:select_by_name("mock").id, db.routes:select_by_name("r1").service.id)
  end)
  it("requests are routed and authenticated by them", function()
    local status, body = get("y-1")
    assert.equal(200, status)
    assert.equal("day", body.headers["x-pass-kind"])
    assert.equal(401, (get("nope")))
  end)
  it("a config Kong would refuse stops start_kong, naming why", function()
    local bad = helpers.make_yaml_file("_format_version: '3.0'\\nconsumers:\\n- username: x\\n  passes:\\n  - kind: [1]\\n")
    local ok, err = helpers.start_kong({ database = "off", declarative_config = bad })
    assert.is_nil(ok)
    assert.matches("in 'passes':\\n      - in entry 1:\\n        in 'kind': expected a string", err, 1, true)
    local ok2, err2 = helpers.start_kong({ database = "off",
      declarative_config = helpers.make_yaml_file("_format_version: '3.0'\\nroutes:\\n- service: nowhere\\n") })
    assert.is_nil(ok2)
    assert.matches("invalid reference 'service: nowhere' (no such entry in 'services')", err2, 1, true)
    local ok3, err3 = helpers.start_kong({ database = "off", declarative_config = helpers.make_yaml_file("routes: []\\n") })
    assert.is_nil(ok3)
    assert.matches("in '_format_version': required field missing", err3, 1, true)
    -- with a database, Kong does not read it
    assert.truthy(helpers.start_kong({ database = "postgres", declarative_config = bad }))
  end)
end)`)
    allPass(results, 3)
  })

  it('POST /config, start_kong and kong.db.declarative read a config alike: one loader', async () => {
    const results = await run(`${PRELUDE}
local declarative = require "kong.db.declarative"
local CONF = [[{ "_format_version": "3.0", "consumers": [ { "username": "fay", "passes": [ { "key": "j-1", "pin": "4" } ] } ] }]]
describe("one loader", function()
  lazy_setup(function()
    helpers.get_db_utils("off", nil, { "pass" })
    assert(helpers.start_kong({ database = "off", declarative_config_string = CONF, plugins = "bundled,pass" }))
    admin = helpers.admin_client()
  end)
  it("start_kong's JSON config, nested credential and all", function()
    local fay = helpers.db.consumers:select_by_username("fay")
    assert.equal(ngx.md5(fay.id .. "4"), helpers.db.passes:select_by_key("j-1").pin)
  end)
  it("POST /config: the same JSON as text; a nested row refused is named where it was", function()
    local r = assert(admin:post("/config", { body = { config = CONF }, headers = { ["Content-Type"] = "application/json" } }))
    assert.res_status(201, r)
    r = assert(admin:post("/config", { headers = { ["Content-Type"] = "application/json" },
      body = { _format_version = "3.0", consumers = { { username = "gil", passes = { { kind = "vip" } } } } } }))
    local body = cjson.decode(assert.res_status(400, r))
    assert.same({ consumers = { { passes = { { ["@entity"] = { "failed conditional validation given value of field 'kind'" },
      note = "required field missing" } } } } }, body.fields)
    assert.truthy(helpers.db.consumers:select_by_username("fay"))
  end)
  it("new_config():parse_string gives what load_into_db takes", function()
    local ents, err, _, meta = declarative.new_config():parse_string(CONF)
    assert.is_nil(err)
    assert.same({ _format_version = "3.0", _transform = true }, meta)
    local _, fay = next(ents.consumers)
    local _, pass = next(ents.passes)
    assert.same({ id = fay.id }, pass.consumer)
    local _, printed, err_t = declarative.new_config():parse_string("_format_version: '3.0'\\nroutes: [a\\n")
    assert.equal("failed parsing declarative configuration: line 2: a flow collection spanning lines is not read by broker", printed)
    assert.equal("invalid declarative configuration", err_t.name)
  end)
end)`)
    allPass(results, 3)
  })

  it("reads YAML's block and flow collections, scalars and comments; refuses what it does not read", async () => {
    const results = await run(`
local yaml = require "broker.spec.yaml"
it("collections and scalars", function()
  assert.same({
    a = 1, b = -2.5, c = true, d = ngx.null, e = "text # not a comment", f = "it's", g = "tab\\there",
    list = { "x", "y" }, flow = { 1, "two", { k = "v" } }, map = { k = "v", n = 3 },
    items = { { name = "one", tags = { "t" } }, { name = "two" } },
    lit = "line 1\\nline 2\\n", folded = "a b", stripped = "keep",
    seq_at_key = { "s" },
  }, yaml.decode([[
# a comment
---
a: 1
b: -2.5
c: true
d: ~
e: "text # not a comment"
f: 'it''s'
g: "tab\\there"
list:
  - x
  - y   # trailing comment
flow: [1, two, { k: v }]
map: { k: v, n: 3 }
items:
  - name: one
    tags: [t]
  - name: two
lit: |
  line 1
  line 2
folded: >-
  a
  b
stripped: |-
  keep
seq_at_key:
- s
]]))
end)
it("refuses anchors, tabs and bad indentation, naming the line", function()
  assert.same({ nil, "line 1: anchors, aliases and tags are not read by broker" }, { yaml.decode("a: &x 1\\nb: *x\\n") })
  assert.same({ nil, "line 2: tabs indent nothing in YAML" }, { yaml.decode("a:\\n\\tb: 1\\n") })
  assert.same({ nil, "line 3: unexpected indentation" }, { yaml.decode("a:\\n    b: 1\\n  c: 2\\n") })
end)`)
    allPass(results, 2)
  })
})
