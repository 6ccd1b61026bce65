import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { LIB_DIR } from './modules.js'
import { createVm } from './engine.js'

// The emulated modules Kong's bundled plugins require (cors, request-size-limiting via Penlight,
// response-transformer, pre-/post-function, ip-restriction's schema, jwt's string.buffer), each loaded from its file
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
preload('kong.tools.mime_type', 'kong/tools/mime_type.lua')
preload('kong.resty.mlcache', 'kong/resty/mlcache.lua')
preload('kong.db.schema', 'kong/db/schema/init.lua')
preload('kong.db.schema.typedefs', 'kong/db/schema/typedefs.lua')
preload('string.buffer', 'string/buffer.lua')

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

  it("kong.tools.mime_type follows Kong's grammar: lower-cased types, `*`, nothing trailing, quoted pairs kept", () => {
    expect(
      lua(`local m = require "kong.tools.mime_type"
           local a, b = m.parse_mime_type("Application/XML")
           local star1, star2 = m.parse_mime_type("*")
           local _, _, q = m.parse_mime_type('text/plain;a="x\\\\"y"')
           return a, b, star1, star2, q.a,
             m.parse_mime_type("application/xml;") == nil, m.parse_mime_type("text/plain ") == nil,
             m.parse_mime_type("text/plain; a = b") == nil, m.parse_mime_type(" text/plain") == nil,
             m.includes({ type = "Text", subtype = "plain" }, { type = "text", subtype = "plain" }),
             select(2, pcall(m.includes, "x", {}))`),
    ).toEqual([
      'application',
      'xml',
      '*',
      '*',
      'x\\"y',
      true,
      true,
      true,
      true,
      false,
      expect.stringContaining('this must be a table'),
    ])
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

  it('string.buffer chains put and putf, and reads with tostring, #, tostring() and ..', () => {
    expect(
      lua(`local buf = require("string.buffer").new()
           local same = buf:put("a", 1, "."):put(2.5):putf("%s-%03d", "x", 7) == buf
           local other = require("string.buffer").new():put("!")
           buf:put(other, setmetatable({}, { __tostring = function() return "T" end }))
           return same, buf:tostring(), #buf, tostring(buf), buf .. "|", "|" .. buf, #other`),
    ).toEqual([true, 'a1.2.5x-007!T', 13, 'a1.2.5x-007!T', 'a1.2.5x-007!T|', '|a1.2.5x-007!T', 1])
  })

  it('string.buffer get consumes from the front: all, n bytes, several lengths at once', () => {
    expect(
      lua(`local buf = require("string.buffer").new():put("hello", " ", "world")
           local a = buf:get(2)
           local b, c = buf:get(3, 1)
           local rest = buf:get()
           local empty = buf:get()
           local past = buf:put("xy"):get(10)
           return a, b, c, rest, empty, past, #buf`),
    ).toEqual(['he', 'llo', ' ', 'world', '', 'xy', 0])
  })

  it('string.buffer set, skip and reset return the buffer, and skip past the end empties it', () => {
    expect(
      lua(`local buf = require("string.buffer").new()
           local r1 = buf:set("abcdef") == buf
           local r2 = buf:skip(2) == buf
           local after_skip = buf:tostring()
           buf:put("g")
           local with_g = buf:tostring()
           local r3 = buf:skip(100) == buf
           local len = #buf
           local r4 = buf:put("z"):reset() == buf
           return r1, r2, after_skip, with_g, r3, len, r4, #buf, buf:tostring()`),
    ).toEqual([true, true, 'cdef', 'cdefg', true, 0, true, 0, ''])
  })

  it('string.buffer refuses what put cannot append, and serialization by name', () => {
    expect(
      lua(`local buffer = require "string.buffer"
           local ok1, e1 = pcall(function() buffer.new():put("a", {}) end)
           local ok2, e2 = pcall(buffer.encode, { 1 })
           local ok3, e3 = pcall(function() buffer.new():decode() end)
           return ok1, e1, ok2, e2, ok3, e3`),
    ).toEqual([
      false,
      "test:2: bad argument #2 to 'put' (string expected, got table)",
      false,
      'string.buffer: encode is not emulated by broker',
      false,
      'test:4: string.buffer: decode is not emulated by broker',
    ])
  })
})
