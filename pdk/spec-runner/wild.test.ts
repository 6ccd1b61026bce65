import { describe, expect, it } from 'vitest'
import { runSpec, outcomes } from './testing/specs.js'

// What third-party plugin repositories' specs lean on (issue 31, run on public plugin repositories): each pinned
// by a tiny spec of ours in their style (testing/badge.ts for the root)
const run = runSpec

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

describe('modules Kong ships that third-party plugins require', () => {
  it("luatz.parse.rfc_3339 gives the timetable as written and the offset; LuaSocket's mime encodes base64 and quoted-printable", async () => {
    const results = await run(`local luatz = require "luatz"
local mime = require "mime"
describe("modules", function()
  it("luatz.parse", function()
    local tt, offset = luatz.parse.rfc_3339("2019-05-20T12:34:56Z")
    assert.equal(1558355696, tt:timestamp())
    assert.equal(0, offset)
    local tt2, offset2 = require("luatz.parse").rfc_3339("2019-05-20T14:34:56.5+02:00")
    assert.equal(1558362896.5, tt2:timestamp())
    assert.equal(7200, offset2)
    assert.is_nil(luatz.parse.rfc_3339("yesterday"))
  end)
  it("mime.b64 and unb64", function()
    assert.equal("aGVsbG8gd29ybGQ=", (mime.b64("hello world")))
    assert.equal("", (mime.b64("")))
    assert.equal("hello world", (mime.unb64("aGVsbG8gd29ybGQ=")))
    local all = {}
    for i = 0, 255 do all[#all + 1] = string.char(i) end
    all = table.concat(all)
    assert.equal(all, (mime.unb64((mime.b64(all)))))
  end)
  it("mime.qp and unqp", function()
    assert.equal("caf=C3=A9 =3D 1", (mime.qp("caf\\195\\169 = 1")))
    assert.equal("caf\\195\\169 = 1", (mime.unqp("caf=C3=A9 =3D 1")))
    assert.equal("ab", (mime.unqp("a=\\r\\nb")))
  end)
end)
`)
    expect(outcomes(results)).toEqual([
      'success modules luatz.parse',
      'success modules mime.b64 and unb64',
      'success modules mime.qp and unqp',
    ])
  })
})

describe('kong.meta', () => {
  it("outside Kong's checkout names the Kong version the emulator is, in kong.meta's fields", async () => {
    const results = await run(`local meta = require "kong.meta"
describe("kong.meta", function()
  it("fields", function()
    assert.equal(kong.version, meta._VERSION)
    assert.equal(kong.version, meta.version)
    assert.equal("kong", meta._NAME)
    assert.equal("kong/" .. kong.version, meta._SERVER_TOKENS)
    local t = meta._VERSION_TABLE
    assert.equal(kong.version, t.major .. "." .. t.minor .. "." .. t.patch)
    assert.equal(kong.version, tostring(t))
    assert.is_table(meta._DEPENDENCIES)
  end)
end)
`)
    expect(outcomes(results)).toEqual(['success kong.meta fields'])
  })
})

describe('a plugin laid out as its rockspec says', () => {
  it("finds the modules a rockspec's build.modules maps to files elsewhere (src/), as luarocks installs them", async () => {
    const results = await run(
      `local answer = require "kong.plugins.mine.answer"
describe("rockspec", function()
  it("maps", function()
    assert.equal(42, answer.value)
    assert.equal("deep", require("kong.plugins.mine.sub.deep").name)
  end)
end)
`,
      {
        'kong-plugin-mine-0.1.0-1.rockspec': `package = "kong-plugin-mine"
version = "0.1.0-1"
local plugin_name = package:match("^kong%-plugin%-(.+)$")
build = {
  type = "builtin",
  modules = {
    ["kong.plugins." .. plugin_name .. ".answer"] = "src/answer.lua",
    ["kong.plugins." .. plugin_name .. ".sub.deep"] = "src/sub/deep.lua",
  },
}`,
        'src/answer.lua': 'return { value = 42 }',
        'src/sub/deep.lua': 'return { name = "deep" }',
      },
    )
    expect(outcomes(results)).toEqual(['success rockspec maps'])
  })

  it("uses the plugin's own spec/helpers.lua when it is not Kong's (a plain busted helper of the repository)", async () => {
    const results = await run(
      `local helpers = require "spec.helpers"
describe("own helpers", function()
  it("are the repository's", function()
    assert.equal("mine", helpers.setup_mock())
  end)
end)
`,
      { 'spec/helpers.lua': 'local helpers = {}\nfunction helpers.setup_mock() return "mine" end\nreturn helpers' },
    )
    expect(outcomes(results)).toEqual(["success own helpers are the repository's"])
  })
})

describe('the request path Kong routes and proxies', () => {
  it("is normalized first, as Kong does (merged slashes, dot segments): //get reaches the mock upstream's /get", async () => {
    const results = await run(`local helpers = require "spec.helpers"
describe("normalized path", function()
  local client
  lazy_setup(function()
    local bp = helpers.get_db_utils("postgres", nil, {})
    local service = bp.services:insert { host = helpers.mock_upstream_host, port = helpers.mock_upstream_port }
    bp.routes:insert { hosts = { "norm.test" }, service = service }
    bp.routes:insert { paths = { "/anything/x" }, hosts = { "prefix.test" }, service = service, strip_path = false }
    assert(helpers.start_kong())
    client = helpers.proxy_client()
  end)
  lazy_teardown(function() if client then client:close() end helpers.stop_kong() end)
  it("merges slashes", function()
    local r = client:get("//get", { headers = { host = "norm.test" } })
    assert.response(r).has.status(200)
  end)
  it("resolves dot segments before matching", function()
    local r = client:get("/anything/y/../x/", { headers = { host = "prefix.test" } })
    local body = assert.response(r).has.status(200)
    local json = require("cjson").decode(body)
    assert.equal("/anything/x/", json.vars.uri)
  end)
end)
`)
    expect(outcomes(results)).toEqual([
      'success normalized path merges slashes',
      'success normalized path resolves dot segments before matching',
    ])
  })
})
