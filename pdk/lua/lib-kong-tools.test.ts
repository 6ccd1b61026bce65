import { afterAll, describe, expect, it } from 'vitest'
import { kitFor } from '../runner/harness.js'
import { LuaRuntime } from './runtime.js'

// Kong's tools modules that are FFI or C in Kong (kong.tools.time, kong.tools.gzip) and the pure-Lua ones
// broker falls back to without a Kong checkout (kong.tools.utils and what it gathers), in a whole runtime:
// ngx and the host as a plugin sees them, no Lua root but broker's own.
const probe = kitFor({}, 'access')
const rt = await LuaRuntime.bare(probe)
afterAll(() => rt.close())
const lua = (code: string) => rt.vm.run(code, '=test')

describe('kong.tools.time', () => {
  it("reads nginx's time units as ngx_parse_time does, and refuses what it does not", () => {
    expect(
      lua(`local t = require "kong.tools.time"
           return t.nginx_conf_time_to_seconds("10"), t.nginx_conf_time_to_seconds("1h 30m"),
             t.nginx_conf_time_to_seconds("2d"), t.nginx_conf_time_to_seconds("1w1s"),
             select(2, pcall(t.nginx_conf_time_to_seconds, "10ms")),
             select(2, pcall(t.nginx_conf_time_to_seconds, "5x"))`),
    ).toEqual([10, 5400, 172800, 604801, "bad argument #1 'str'", "bad argument #1 'str'"])
  })

  it('gives the clocks in the units Kong does', () => {
    const before = Date.now()
    const [ms, ns, mono, start] = lua(`local t = require "kong.tools.time"
      return t.get_updated_now_ms(), t.time_ns(), t.get_updated_monotonic_ms(), t.get_start_time_ms()`) as number[]
    expect(ms).toBeGreaterThanOrEqual(before - 1)
    expect(ms).toBeLessThanOrEqual(Date.now() + 1)
    expect(Math.abs(ns! / 1e6 - before)).toBeLessThan(1000)
    expect(mono).toBeGreaterThan(0)
    expect(start).toBeGreaterThan(before - 60_000)
  })
})

describe('kong.tools.gzip', () => {
  it('inflates what it deflated (binary included) and answers nil, err for what is not gzip', () => {
    expect(
      lua(`local gz = require "kong.tools.gzip"
           local s = "hello \\0\\255 " .. string.rep("abc", 100)
           local z = gz.deflate_gzip(s)
           return z:byte(1), z:byte(2), #z < #s, gz.inflate_gzip(z) == s, gz.inflate_gzip("not gzip")`),
    ).toEqual([0x1f, 0x8b, true, true, undefined, 'INFLATE: data error'])
  })
})

describe('kong.tools.utils without a Kong checkout', () => {
  it('writes byte counts and decodes base64 as Kong 3.x does', () => {
    expect(
      lua(`local s = require "kong.tools.string"
           local list = s.try_decode_base64({ "aGk=", "aGk", "%%" })
           return s.bytes_to_str(5497558), s.bytes_to_str(5497558, "G", 3), s.bytes_to_str(2048, "k", 0),
             select(2, pcall(s.bytes_to_str, 1, "t")), select(2, pcall(s.bytes_to_str, 1, "k", -1)),
             s.try_decode_base64("aGk="), list[1], list[2], list[3], s.try_decode_base64(5)`),
    ).toEqual([
      '5497558',
      '0.005 GiB',
      '2 KiB',
      expect.stringContaining("invalid unit 't' (expected 'k/K', 'm/M', or 'g/G')"),
      expect.stringContaining('scale must be equal or greater than 0'),
      'hi',
      'hi',
      'hi',
      '%%',
      5,
    ])
  })

  it("gathers table, uuid, rand, time, string, ip and http as Kong 3.x's does", () => {
    expect(
      lua(`local u = require "kong.tools.utils"
           return u.is_valid_uuid(u.uuid()), #u.random_string(), u.table_contains({ "a", "b" }, "b"),
             u.is_array({ 1, 2 }), u.is_array({ a = 1 }), u.strip("  x \\t"), u.split("a,b,", ",")[3],
             u.bytes_to_str(5497558, "m"), u.parse_ngx_size("8k"), u.is_valid_ip("::1"),
             u.is_valid_cidr("10.0.0.0/33"), u.hostname_type("1.2.3.4"), u.validate_header_name("X-Ok"),
             select(2, u.validate_header_name("bad header")), u.parse_directive_header("public, max-age=60")["max-age"],
             u.deep_copy({ a = { b = 1 } }).a.b, u.nginx_conf_time_to_seconds("1m")`),
    ).toEqual([
      true,
      32,
      true,
      true,
      false,
      'x',
      '',
      '5.24 MiB',
      8192,
      true,
      false,
      'ipv4',
      'X-Ok',
      "bad header name 'bad header', allowed characters are A-Z, a-z, 0-9, '_', and '-'",
      60,
      1,
      60,
    ])
  })

  it('names a function it has not written and the way out, rather than a nil call', () => {
    const [ok, err] = lua(`return pcall(require("kong.tools.utils").normalize_ip, "1.2.3.4")`)
    expect(ok).toBe(false)
    expect(String(err)).toContain('kong.tools.ip.normalize_ip is not written by broker')
    expect(String(err)).toContain("put a checkout of Kong's source on lua_path")
  })
})
