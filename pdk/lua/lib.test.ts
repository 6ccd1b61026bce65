import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { LIB_DIR } from './modules.js'
import { createVm } from './vm.js'

// The emulated modules Kong's bundled plugins require (cors, request-size-limiting via Penlight,
// response-transformer, pre-/post-function, ip-restriction's schema), each loaded from its file
// through package.preload in a bare VM with a stub ngx: the module alone, not the kit.
const vm = await createVm({ heapLimit: 32 * 1024 * 1024 })
afterAll(() => vm.close())
const lua = (code: string) => vm.run(code, '=test')
const preload = (name: string, file: string) => {
  const src = readFileSync(join(LIB_DIR, file), 'utf8')
  lua(`package.preload[${JSON.stringify(name)}] = assert(load(${JSON.stringify(src)}, "@${file}"))`)
}
lua(
  'now = 1000; ngx = { null = setmetatable({}, { __tostring = function() return "null" end }), now = function() return now end }',
)
preload('socket.url', 'socket/url.lua')
preload('lfs', 'lfs.lua')
preload('kong.tools.mime_type', 'kong/tools/mime_type.lua')
preload('kong.resty.mlcache', 'kong/resty/mlcache.lua')
preload('kong.db.schema', 'kong/db/schema/init.lua')
preload('kong.db.schema.typedefs', 'kong/db/schema/typedefs.lua')

describe('emulated modules for the bundled plugins', () => {
  it('socket.url parses scheme, userinfo, host, port, path, query and fragment', () => {
    expect(
      lua(`local p = require("socket.url").parse("HTTP://u:pw@[::1]:8080/a/b;x?q=1#top")
           return p.scheme, p.user, p.password, p.host, p.port, p.path, p.params, p.query, p.fragment`),
    ).toEqual(['http', 'u', 'pw', '::1', '8080', '/a/b', 'x', 'q=1', 'top'])
  })

  it('socket.url builds back what it parsed, and escapes', () => {
    expect(
      lua(`local url = require "socket.url"
           return url.build(url.parse("https://example.com:8443/p?x=1")), url.escape("a b/"), url.unescape("a%20b")`),
    ).toEqual(['https://example.com:8443/p?x=1', 'a%20b%2f', 'a b'])
  })

  it('lfs answers as for a missing file, never touching the disk', () => {
    expect(
      lua(`local lfs = require "lfs"; local v, err = lfs.attributes("/etc/passwd", "size"); return v, err`),
    ).toEqual([undefined, '/etc/passwd: No such file or directory (broker does not emulate a filesystem)'])
  })

  it('kong.tools.mime_type parses parameters and matches suffixes and wildcards', () => {
    expect(
      lua(`local m = require "kong.tools.mime_type"
           local t, s, p = m.parse_mime_type('application/json; Charset="utf-8"; q=1')
           local bad = m.parse_mime_type("json")
           return t, s, p.charset, p.q, bad,
             m.includes({ type = "application", subtype = "json" }, { type = "application", subtype = "vnd.api+json" }),
             m.includes({ type = "*", subtype = "*" }, { type = "text", subtype = "html" }),
             m.includes({ type = "text", subtype = "plain" }, { type = "text", subtype = "html" })`),
    ).toEqual(['application', 'json', 'utf-8', '1', undefined, true, true, false])
  })

  it('kong.resty.mlcache runs the callback once per key until the ttl passes', () => {
    expect(
      lua(`local c = assert(require("kong.resty.mlcache").new("n", "kong_db_cache", { ttl = 10 }))
           local calls = 0
           local function cb(x) calls = calls + 1; return x * 2 end
           local a, _, hit1 = c:get("k", nil, cb, 21)
           local b, _, hit2 = c:get("k", nil, cb, 21)
           now = now + 11
           c:get("k", nil, cb, 21)
           return a, b, hit1, hit2, calls`),
    ).toEqual([42, 42, 3, 1, 2])
  })

  it('typedefs are callable with overrides, and an unknown one is refused by name', () => {
    expect(
      lua(`local t = require "kong.db.schema.typedefs"
           local p = t.protocols { default = { "http" } }
           local ok, err = pcall(function() return t.no_such_typedef end)
           return p.type, p.default[1], t.protocols.default[1], ok, err`),
    ).toEqual([
      'set',
      'http',
      'grpc',
      false,
      'test:3: kong.db.schema.typedefs.no_such_typedef is not emulated by broker',
    ])
  })
})
