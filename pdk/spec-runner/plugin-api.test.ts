import { describe, expect, it } from 'vitest'
import { allPass, outcomes, runSpec } from './testing/specs.js'

// A plugin's own Admin API endpoints (kong/plugins/<name>/api.lua), as Kong mounts them beside its own: the
// `notes` plugin below has a DAO and routes that read URL params and query args, a JSON body, print their
// answer, answer with kong.response.exit, go through `db`, and fail with helpers.yield_error.
const NOTES_FILES: Record<string, string> = {
  'kong/plugins/notes/handler.lua': `return { PRIORITY = 10, VERSION = "1.0.0" }`,
  'kong/plugins/notes/schema.lua': `
return { name = "notes", fields = { { config = { type = "record", fields = {} } } } }`,
  'kong/plugins/notes/daos.lua': `
local typedefs = require "kong.db.schema.typedefs"
return { {
  name = "notes", primary_key = { "id" }, endpoint_key = "title", generate_admin_api = false,
  fields = {
    { id = typedefs.uuid },
    { title = { type = "string", required = true, unique = true } },
    { text = { type = "string" } },
  },
} }`,
  'kong/plugins/notes/api.lua': `
local cjson = require "cjson"
return {
  ["/notes-echo/:word"] = {
    schema = kong.db.notes.schema,
    GET = function(self)
      return kong.response.exit(200, { word = self.params.word, times = self.params.times,
        method = kong.request.get_method() })
    end,
    POST = function(self)
      return kong.response.exit(201, { word = self.params.word, got = self.params.got, list = self.params.list })
    end,
  },
  ["/notes-text"] = {
    schema = kong.db.notes.schema,
    GET = function()
      ngx.header["Content-Type"] = "text/plain; charset=UTF-8"
      ngx.say("# notes")
      ngx.print("count ", #kong.db.notes:page())
    end,
  },
  ["/notes-store"] = {
    schema = kong.db.notes.schema,
    POST = function(self, db, helpers)
      local row, err = db.notes:insert({ title = self.params.title, text = self.params.text })
      if not row then return helpers.yield_error(err) end
      return kong.response.exit(201, row)
    end,
  },
  ["/notes-store/:title"] = {
    schema = kong.db.notes.schema,
    GET = function(self, db, helpers)
      local row = db.notes:select_by_title(self.params.title)
      if not row then return helpers.yield_error({ code = 6, name = "not found", message = "no note " .. self.params.title }) end
      kong.response.exit(200, row)
      error("not reached: exit ends the handler")
    end,
    DELETE = function(self, db, helpers)
      return helpers.yield_error("a plain error")
    end,
  },
  ["/notes-broken"] = {
    schema = kong.db.notes.schema,
    GET = function() local t = nil; return t.field end,
  },
}`,
}

const PRELUDE = `
local helpers = require "spec.helpers"
local cjson = require "cjson"
local admin
local function setup()
  helpers.get_db_utils("postgres", nil, { "notes" })
  assert(helpers.start_kong({ plugins = "bundled,notes" }))
  admin = helpers.admin_client()
end
`

describe("a plugin's own Admin API routes (api.lua)", () => {
  it('answer with their handlers: params, query, JSON body, printed text, exit, db and errors', async () => {
    const results = await runSpec(
      `${PRELUDE}
describe("notes api", function()
  lazy_setup(setup)
  it("GET merges the URL param and the query args into self.params", function()
    local res = assert(admin:get("/notes-echo/hello", { query = { times = "3" } }))
    local body = cjson.decode(assert.res_status(200, res))
    assert.same({ word = "hello", times = "3", method = "GET" }, body)
    assert.matches("application/json", res.headers["Content-Type"], 1, true)
  end)
  it("POST merges the JSON body", function()
    local res = assert(admin:post("/notes-echo/hi", { body = { got = "yes", list = { 1, 2 } },
      headers = { ["Content-Type"] = "application/json" } }))
    assert.same({ word = "hi", got = "yes", list = { 1, 2 } }, cjson.decode(assert.res_status(201, res)))
  end)
  it("a form body's nested keys and booleans are decoded", function()
    local res = assert(admin:post("/notes-echo/f", { body = "got=true&list[1]=a&list[2]=b",
      headers = { ["Content-Type"] = "application/x-www-form-urlencoded" } }))
    assert.same({ word = "f", got = true, list = { "a", "b" } }, cjson.decode(assert.res_status(201, res)))
  end)
  it("a handler that prints answers 200 with what it printed and its content type", function()
    local res = assert(admin:get("/notes-text"))
    assert.equal("# notes\\ncount 0", assert.res_status(200, res))
    assert.equal("text/plain; charset=UTF-8", res.headers["Content-Type"])
  end)
  it("a route with a schema gets kong.db as db", function()
    local res = assert(admin:post("/notes-store", { body = { title = "a", text = "first" },
      headers = { ["Content-Type"] = "application/json" } }))
    assert.same("first", cjson.decode(assert.res_status(201, res)).text)
    local got = cjson.decode(assert.res_status(200, assert(admin:get("/notes-store/a"))))
    assert.same("a", got.title)
    assert.equal("count 1", (assert.res_status(200, assert(admin:get("/notes-text"))):match("count %d+")))
  end)
  it("helpers.yield_error answers as Kong's on_error does", function()
    local body = cjson.decode(assert.res_status(404, assert(admin:get("/notes-store/nope"))))
    assert.equal("no note nope", body.message)
    body = cjson.decode(assert.res_status(500, assert(admin:delete("/notes-store/a"))))
    assert.same({ message = "An unexpected error occurred" }, body)
  end)
  it("a handler that fails is a 500, its error in the error log", function()
    local body = cjson.decode(assert.res_status(500, assert(admin:get("/notes-broken"))))
    assert.same({ message = "An unexpected error occurred" }, body)
    assert.logfile().has.line("attempt to index", true)
  end)
  it("a method the route does not have is 405; OPTIONS lists the methods; HEAD is GET's", function()
    local body = cjson.decode(assert.res_status(405, assert(admin:put("/notes-text"))))
    assert.same({ message = "Method not allowed" }, body)
    local res = assert(admin:options("/notes-echo/x"))
    assert.res_status(204, res)
    assert.equal("GET, HEAD, OPTIONS, POST", res.headers["Allow"])
    assert.res_status(200, assert(admin:head("/notes-text")))
  end)
  it("a path no route has stays Kong's 404", function()
    assert.res_status(404, assert(admin:get("/notes-nothing")))
    assert.res_status(404, assert(admin:get("/notes-echo/a/b")))
  end)
end)`,
      NOTES_FILES,
    )
    allPass(results, 9)
  })

  it("run after the plugins' worker start, and a Kong started again has new workers and empty shared dicts", async () => {
    const files = {
      ...NOTES_FILES,
      'kong/plugins/notes/handler.lua': `
local Notes = { PRIORITY = 10, VERSION = "1.0.0" }
function Notes:init_worker()
  Notes.ready = true
  ngx.shared.kong:incr("notes_workers", 1, 0)
end
return Notes`,
      'kong/plugins/notes/api.lua': `
return { ["/notes-workers"] = { GET = function()
  local ready = require("kong.plugins.notes.handler").ready
  return kong.response.exit(200, { ready = ready, workers = ngx.shared.kong:get("notes_workers") })
end } }`,
    }
    const results = await runSpec(
      `
local helpers = require "spec.helpers"
local cjson = require "cjson"
local function workers()
  local res = assert(helpers.admin_client():get("/notes-workers"))
  local body = cjson.decode(assert.res_status(200, res))
  assert.is_true(body.ready)
  return body.workers
end
describe("workers", function()
  it("start before the Admin API answers, once per Kong", function()
    local bp = helpers.get_db_utils("postgres", nil, { "notes" })
    bp.plugins:insert({ name = "notes" })
    assert(helpers.start_kong({ plugins = "bundled,notes" }))
    assert.equal(1, workers())
    assert.equal(1, workers())
    assert(helpers.restart_kong({ plugins = "bundled,notes" }))
    assert.equal(1, workers())
  end)
end)`,
      files,
    )
    allPass(results, 1)
  })

  it("customize a DAO's generated endpoint: `before` first, `parent` the generated one", async () => {
    const files = {
      ...NOTES_FILES,
      'kong/plugins/notes/daos.lua': NOTES_FILES['kong/plugins/notes/daos.lua']!.replace(
        'generate_admin_api = false',
        'generate_admin_api = true',
      ),
      'kong/plugins/notes/api.lua': `
return {
  ["/notes/:notes"] = {
    schema = kong.db.notes.schema,
    before = function(self)
      if self.params.notes == "secret" then return kong.response.exit(403, { message = "hidden" }) end
    end,
    PUT = function(self, db, helpers, parent)
      self.args.post.text = string.upper(self.args.post.text or "")
      return parent()
    end,
  },
}`,
    }
    const results = await runSpec(
      `${PRELUDE}
describe("override", function()
  lazy_setup(setup)
  it("PUT goes through the handler, then the generated endpoint", function()
    local res = assert(admin:put("/notes/one", { body = { text = "quiet" },
      headers = { ["Content-Type"] = "application/json" } }))
    local row = cjson.decode(assert.res_status(200, res))
    assert.same({ "one", "QUIET" }, { row.title, row.text })
    assert.equal("QUIET", cjson.decode(assert.res_status(200, assert(admin:get("/notes/one")))).text)
  end)
  it("a method the route does not define runs the generated one after before", function()
    assert.same({ message = "hidden" }, cjson.decode(assert.res_status(403, assert(admin:get("/notes/secret")))))
    assert.res_status(204, assert(admin:delete("/notes/one")))
    assert.res_status(404, assert(admin:get("/notes/one")))
  end)
end)`,
      files,
    )
    allPass(results, 2)
  })

  it('an api.lua that fails to load fails the request naming it', async () => {
    const results = await runSpec(
      `${PRELUDE}
describe("broken api", function()
  lazy_setup(setup)
  it("raises", function() admin:get("/anything") end)
end)`,
      { ...NOTES_FILES, 'kong/plugins/notes/api.lua': `error("boom in api.lua")` },
    )
    expect(outcomes(results)).toEqual([expect.stringMatching(/error .*kong\.plugins\.notes\.api.*boom in api\.lua/)])
  })
})
