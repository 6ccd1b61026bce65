import { describe, it } from 'vitest'
import { allPass, runSpec } from './testing/specs.js'

// A plugin that writes its own log file as Kong's file-log does (LuaJIT's ffi: open, write, close, strerror,
// errno, with lua_system_constants' flags), under `broker pdk test`: the spec reads what the plugin wrote, and a file
// the plugin cannot open is logged with C's words. `seeder` calls a C function broker does not back: the request
// fails naming it rather than going on with a made-up answer.
const PLUGINS = {
  'kong/plugins/jotter/handler.lua': `
local ffi = require "ffi"
local cjson = require "cjson"
local sc = require "lua_system_constants"
local C = ffi.C
local FLAGS = bit.bor(sc.O_WRONLY(), sc.O_CREAT(), sc.O_APPEND())
local MODE = ffi.new("int", bit.bor(sc.S_IRUSR(), sc.S_IWUSR(), sc.S_IRGRP(), sc.S_IROTH()))
local Jotter = { PRIORITY = 9, VERSION = "1.0.0" }
function Jotter:log(conf)
  local line = cjson.encode({ path = kong.request.get_path(), status = kong.response.get_status() }) .. "\\n"
  local fd = C.open(conf.path, FLAGS, MODE)
  if fd < 0 then
    return kong.log.err("cannot open ", conf.path, ": ", ffi.string(C.strerror(ffi.errno())))
  end
  C.write(fd, line, #line)
  C.close(fd)
end
return Jotter`,
  'kong/plugins/jotter/schema.lua': `
return { name = "jotter", fields = { { config = { type = "record", fields = {
  { path = { type = "string", required = true } },
} } } } }`,
  'kong/plugins/seeder/handler.lua': `
local ffi = require "ffi"
ffi.cdef [[
int RAND_bytes(unsigned char *buf, int num);
]]
local Seeder = { PRIORITY = 10, VERSION = "1.0.0" }
function Seeder:access()
  local buf = ffi.new("unsigned char[?]", 8)
  local ok = pcall(ffi.C.RAND_bytes, buf, 8)
  kong.response.set_header("x-seeded", tostring(ok))
end
return Seeder`,
  'kong/plugins/seeder/schema.lua': `
return { name = "seeder", fields = { { config = { type = "record", fields = {} } } } }`,
}

describe('ffi under broker pdk test', () => {
  it("a plugin appends to the file the spec names through ffi.C; one it cannot open is logged with C's words; an unbacked C function fails the request by name", async () => {
    const results = await runSpec(
      `
local helpers = require "spec.helpers"
local pl_file = require "pl.file"
local cjson = require "cjson"
describe("jotter", function()
  local proxy, path
  lazy_setup(function()
    path = os.tmpname()
    os.remove(path)
    local bp = helpers.get_db_utils("postgres", nil, { "jotter", "seeder" })
    local r1 = bp.routes:insert({ hosts = { "jot.test" } })
    bp.plugins:insert({ name = "jotter", route = { id = r1.id }, config = { path = path } })
    local r2 = bp.routes:insert({ hosts = { "nowhere.test" } })
    bp.plugins:insert({ name = "jotter", route = { id = r2.id }, config = { path = path .. "-missing/log" } })
    local r3 = bp.routes:insert({ hosts = { "seed.test" } })
    bp.plugins:insert({ name = "seeder", route = { id = r3.id } })
    assert(helpers.start_kong({ plugins = "bundled,jotter,seeder" }))
    proxy = helpers.proxy_client()
  end)
  lazy_teardown(function()
    helpers.stop_kong()
    os.remove(path)
  end)
  it("appends a JSON line per request", function()
    assert.res_status(200, assert(proxy:get("/status/200", { headers = { host = "jot.test" } })))
    assert.res_status(201, assert(proxy:get("/status/201", { headers = { host = "jot.test" } })))
    local lines = {}
    for line in assert(pl_file.read(path)):gmatch("[^\\n]+") do lines[#lines + 1] = cjson.decode(line) end
    assert.same({ { path = "/status/200", status = 200 }, { path = "/status/201", status = 201 } }, lines)
  end)
  it("logs strerror's words when the folder is missing", function()
    helpers.clean_logfile()
    assert.res_status(200, assert(proxy:get("/", { headers = { host = "nowhere.test" } })))
    assert.logfile().has.line("cannot open .*-missing/log: No such file or directory while logging request", false)
  end)
  it("a C function broker does not back fails the request naming it, even under pcall", function()
    local ok, err = pcall(proxy.get, proxy, "/", { headers = { host = "seed.test" } })
    assert.is_false(ok)
    assert.matches('calls ffi.C.RAND_bytes() of "ffi", which broker does not emulate', err, 1, true)
  end)
end)`,
      PLUGINS,
    )
    allPass(results, 3)
  })
})
