import { afterAll, describe, expect, it } from 'vitest'
import { kitFor } from '../runner/harness.js'
import { LuaRuntime } from './runtime.js'

// What Kong's tracing plugins (zipkin, opentelemetry) load besides Kong's own code: lua-resty-openssl's bn (the
// datadog and gcp trace ids are decimal), lua_pack (gRPC frames in kong.tools.grpc) and typedefs.propagation, in a
// whole runtime without a Kong checkout. bn's values are those of lua-resty-openssl's README and of OpenSSL's
// BN_bn2hex / BN_bn2dec / MPI formats; lua_pack's are lpack's byte layouts on x86-64.
const rt = await LuaRuntime.bare(kitFor({}, 'access'))
afterAll(() => rt.close())
const lua = (code: string, ...args: unknown[]) => {
  rt.vm.run(`function __t(...) ${code} end`, '=test')
  return rt.vm.call('__t', ...args)
}

describe('resty.openssl.bn', () => {
  it("reads and writes the README's values in every base", () => {
    expect(
      lua(`local bn, hex = require "resty.openssl.bn", require("resty.string").to_hex
           return hex(bn.from_binary("\\x5b\\x25"):to_binary()), hex(bn.from_mpi("\\x00\\x00\\x00\\x02\\x5b\\x25"):to_mpi()),
             bn.from_hex("5B25"):to_hex(), bn.from_dec("23333"):to_dec(), bn.from_dec("23333"):to_number(),
             tostring(bn.new("5b25", 16)), bn.new(0):to_hex()`),
    ).toEqual(['5b25', '000000025b25', '5B25', '23333', 23333, '23333', '0'])
  })

  it('writes hex in whole bytes, signs in MPI, and pads binary on request (as OpenSSL does)', () => {
    expect(
      lua(`local bn, hex = require "resty.openssl.bn", require("resty.string").to_hex
           return bn.from_dec("2748"):to_hex(), bn.from_dec("-2748"):to_hex(), hex(bn.new(-1):to_mpi()),
             hex(bn.new(128):to_mpi()), hex(bn.new(1):to_binary(8)), bn.new("") == nil, bn.new(0):to_binary()`),
    ).toEqual(['0ABC', '-0ABC', '0000000181', '000000020080', '0000000000000001', true, ''])
  })

  it("turns Datadog's 64-bit decimal ids into 8 bytes and back, as Kong's datadog propagation does", () => {
    expect(
      lua(`local bn, hex = require "resty.openssl.bn", require("resty.string").to_hex
           local id = bn.from_dec("18446744073709551615"):to_binary()
           return hex(id), bn.from_binary(string.rep("\\0", 8) .. id):to_dec(), bn.from_dec("1234567890"):to_binary(8)`),
    ).toEqual(['ffffffffffffffff', '18446744073709551615', Buffer.from('00000000499602d2', 'hex')])
  })

  it('computes with operators, methods and Lua numbers alike', () => {
    expect(
      lua(`local bn = require "resty.openssl.bn"
           local a, b = bn.new(123456), bn.new(222)
           return tostring(a + b), tostring(a - 222), tostring(222 * a), tostring(a / b), tostring(a % b), tostring(-a),
             tostring(bn.mod_exp(4, 13, 497)), tostring(a:gcd(b)), tostring(bn.new(3):exp(40)), tostring(a:lshift(4)),
             a > b, a == bn.new(123456), a:is_odd(), bn.new(0):is_zero(), bn.new(1):is_one(), a:is_word(123456),
             bn.new(97):is_prime(), bn.new(91):is_prime()`),
    ).toEqual([
      '123678',
      '123234',
      '27407232',
      '556',
      '24',
      '-123456',
      '445',
      '6',
      '12157665459056928801',
      '1975296',
      true,
      true,
      false,
      true,
      true,
      true,
      true,
      false,
    ])
  })

  it("answers nil, err for text it cannot read, and raises OpenSSL's failure for a zero divisor", () => {
    expect(
      lua(`local bn = require "resty.openssl.bn"
           local _, e1 = bn.new("xyz")
           local _, e2 = bn.from_hex("zz")
           local _, e3 = bn.new("1", 8)
           local _, e4 = bn.new({})
           local _, e5 = bn.new(300):to_binary(1)
           local ok, e6 = pcall(function() return bn.new(1) / 0 end)
           local ok2, e7 = pcall(function() return bn.new(1) + "2" end)
           return e1, e2, e3, e4, e5, ok, e6, ok2, e7`),
    ).toEqual([
      'bn.new: set_dec',
      'bn.from_hex: set_hex',
      'bn.new: set_bn: unsupported base: 8',
      'bn.new: set_bn: expect nil, a number or a string at #1',
      'bn:to_binary',
      false,
      'test:7: BN_div() failed',
      false,
      'test:8: cannot add a string to bignum',
    ])
  })
})

describe('lua_pack', () => {
  it("packs and unpacks a gRPC frame as Kong's kong.tools.grpc does (a byte, a big-endian length)", () => {
    expect(
      lua(`local lpack = require "lua_pack"
           local frame = lpack.pack("C>I", 0, 5) .. "hello"
           local pos, kind, size = lpack.unpack(frame, "C>I")
           return require("resty.string").to_hex(frame), pos, kind, size, frame:sub(pos, pos + size - 1)`),
    ).toEqual(['000000000568656c6c6f', 6, 0, 5, 'hello'])
  })

  it("reads lpack's codes: little endian by default, strings with and without lengths, floats, bits and hex", () => {
    expect(
      lua(`local lpack, hex = require "lua_pack", require("resty.string").to_hex
           return hex(lpack.pack("Ii", 1, -2)), hex(lpack.pack("zpP", "ab", "cd", "e")), hex(lpack.pack(">s", 258)),
             hex(lpack.pack("B", "1000000011")), hex(lpack.pack("X", "0a1B 7")), hex(lpack.pack("C2x", 300, -1))`),
    ).toEqual(['01000000feffffff', '616200026364010065', '0102', '80c0', '0a1b70', '2cff00'])
    expect(
      lua(`local lpack = require "lua_pack"
           local s = lpack.pack("zpdA", "ab", "cd", 0.5, "xyz")
           return lpack.unpack(s, "zpdA3")`),
    ).toEqual([18, 'ab', 'cd', 0.5, 'xyz'])
    expect(
      lua(`local lpack = require "lua_pack"
           return lpack.unpack("\\10\\27\\128", "X2 B1 c")`),
    ).toEqual([4, '0A1B', '10000000'])
  })

  it('stops where the string runs out, answering the position reached and the values read', () => {
    expect(lua(`return require("lua_pack").unpack("\\1\\2", "CCC")`)).toEqual([3, 1, 2])
    expect(lua(`return require("lua_pack").unpack("\\1\\5ab", "CpC")`)).toEqual([2, 1])
    expect(lua(`return require("lua_pack").unpack("abc", "C", 2)`)).toEqual([3, 98])
  })

  it('refuses a code it does not know, naming it', () => {
    expect(lua(`return pcall(require("lua_pack").pack, "Q", 1)`)).toEqual([
      false,
      "bad argument #1 to 'pack' (bad code `Q')",
    ])
  })
})

describe('typedefs.propagation', () => {
  const process = (conf: unknown) =>
    lua(
      `local typedefs = require "kong.db.schema.typedefs"
       local schema = { fields = { { config = { type = "record", fields = {
         { propagation = typedefs.propagation { default = { default_format = "b3" } } } } } } } }
       return require("broker.schema").process(schema, ...)`,
      conf,
    )

  it("fills zipkin's default and keeps the formats given", () => {
    expect(process({})).toEqual([{ propagation: { default_format: 'b3' } }])
    expect(
      process({ propagation: { extract: ['datadog'], inject: ['preserve', 'w3c'], default_format: 'w3c' } }),
    ).toEqual([{ propagation: { extract: ['datadog'], inject: ['preserve', 'w3c'], default_format: 'w3c' } }])
  })

  it('refuses a format Kong does not know, and a header name Kong would refuse, naming the field', () => {
    expect(
      process({ propagation: { extract: ['b3-single'], clear: ['bad header'], default_format: 'b3' } })[1],
    ).toEqual({
      'propagation.extract[1]': 'expected one of: w3c, b3, jaeger, ot, datadog, aws, gcp',
      'propagation.clear[1]': "bad header name 'bad header', allowed characters are A-Z, a-z, 0-9, '_', and '-'",
    })
  })
})

// opentelemetry's resource_attributes: a map whose keys and values Kong checks before the map's custom_validator,
// answering the first failure as the map's own error (its spec/03-plugins/37-opentelemetry/02-schema_spec.lua)
describe('a map field', () => {
  // the config is Lua source: a JS object cannot hold the number key Kong refuses
  const process = (conf: string) =>
    lua(
      `local schema = { fields = { { config = { type = "record", fields = {
         { attrs = { type = "map", keys = { type = "string", required = true }, values = { type = "string", required = true },
           custom_validator = function() return nil, "the custom validator ran" end } } } } } } }
       return require("broker.schema").process(schema, ${conf})`,
    )

  it("answers a key or value error as the map's own, before its custom validator", () => {
    expect(process('{ attrs = { [123] = "x" } }')[1]).toEqual({ attrs: 'expected a string' })
    expect(process('{ attrs = { foo = "" } }')[1]).toEqual({ attrs: 'length must be at least 1' })
    expect(process('{ attrs = { foo = "bar" } }')[1]).toEqual({ attrs: 'the custom validator ran' })
  })
})
