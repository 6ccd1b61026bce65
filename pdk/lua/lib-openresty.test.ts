import { afterAll, describe, expect, it } from 'vitest'
import { kitFor } from '../runner/harness.js'
import { LuaRuntime } from './runtime.js'

// The OpenResty libraries Kong ships that plugins require (resty.lock, resty.aes, lua-resty-openssl's cipher, hmac,
// kdf and rand, LuaSocket), in a whole runtime, checked against the vectors their documentation, RFC 5869 and the
// openssl command line give.
const rt = await LuaRuntime.bare(kitFor({}, 'access'))
afterAll(() => rt.close())
const lua = (code: string) => rt.vm.run(code, '=test')

describe('resty.openssl.cipher', () => {
  it('encrypts and decrypts as its README shows, in one call and through init/update/final', () => {
    expect(
      lua(`local c = require("resty.openssl.cipher").new("aes256")
           local key, iv = string.rep("0", 32), string.rep("0", 16)
           local one = ngx.encode_base64(c:encrypt(key, iv, "🦢"))
           c:init(key, iv, { is_encrypt = true })
           local part = c:update("🦢")
           local streamed = ngx.encode_base64(part .. c:final())
           return one, streamed, c:decrypt(key, iv, ngx.decode_base64(one))`),
    ).toEqual(['vGJRHufPYrbbnYYC0+BnwQ==', 'vGJRHufPYrbbnYYC0+BnwQ==', '🦢'])
  })

  it('authenticates AES-GCM with aad and tag, and refuses a wrong tag with nil, err', () => {
    const [plain, tagLen, refused, err] = lua(`local c = require("resty.openssl.cipher").new("aes-256-gcm")
      local key, iv = string.rep("k", 32), string.rep("i", 12)
      local ct = c:encrypt(key, iv, "secret", false, "aad")
      local tag = c:get_aead_tag()
      local plain = c:decrypt(key, iv, ct, false, "aad", tag)
      local refused, err = c:decrypt(key, iv, ct, false, "aad", string.rep("x", 16))
      return plain, #tag, refused, err`)
    expect([plain, tagLen, refused]).toEqual(['secret', 16, undefined])
    expect(String(err)).toMatch(/^cipher:final/)
  })

  it('answers nil, err for an unknown cipher and a key of the wrong size', () => {
    expect(
      lua(`local cipher = require "resty.openssl.cipher"
           local _, e1 = cipher.new("nope-128")
           local _, e2 = cipher.new("aes-128-cbc"):encrypt("short", string.rep("0", 16), "x")
           return e1, e2`),
    ).toEqual(['cipher.new: invalid cipher type "nope-128"', 'cipher:init: incorrect key size, expect 16'])
  })
})

describe('resty.openssl.hmac, kdf and rand', () => {
  it('gives the README values for hmac, PBKDF2 and scrypt', () => {
    expect(
      lua(`local kdf = require "resty.openssl.kdf"
           return ngx.encode_base64(require("resty.openssl.hmac").new("goose", "sha256"):final("🦢")),
             ngx.encode_base64(kdf.derive({ type = kdf.PBKDF2, outlen = 16, pass = "1234567", md = "md5", pbkdf2_iter = 1000 })),
             ngx.encode_base64(kdf.derive({ type = kdf.SCRYPT, outlen = 16, pass = "1234567", scrypt_N = 1024, scrypt_r = 8, scrypt_p = 16 }))`),
    ).toEqual(['k2UcrRp25tj1Spff89mJF3fAVQ0lodq/tJT53EYXp0c=', 'cDRFLQ7NWt+AP4i0TdBzog==', '9giFtxace5sESmRb8qxuOw=='])
  })

  it("derives RFC 5869's first HKDF case, whole and extract-only, and through kdf.new", () => {
    lua(`function hkdf_case(ikm, salt, info)
           local kdf, to_hex = require "resty.openssl.kdf", require("resty.string").to_hex
           local okm = kdf.derive({ type = kdf.HKDF, outlen = 42, md = "sha256", salt = salt, hkdf_key = ikm, hkdf_info = info })
           local prk = kdf.derive({ type = kdf.HKDF, md = "sha256", salt = salt, hkdf_key = ikm,
             hkdf_mode = kdf.HKDEF_MODE_EXTRACT_ONLY })
           local via = kdf.new("HKDF"):derive(42, { digest = "sha256", salt = salt, key = ikm, info = info })
           return to_hex(okm), to_hex(prk), via == okm
         end`)
    const bytes = (h: string) => Buffer.from(h, 'hex')
    expect(
      rt.vm.call(
        'hkdf_case',
        bytes('0b'.repeat(22)),
        bytes('000102030405060708090a0b0c'),
        bytes('f0f1f2f3f4f5f6f7f8f9'),
      ),
    ).toEqual([
      '3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865',
      '077709362c2e32df0ddc3f0dc47bba6390b6c73bb50f9c3122ec844ad7c2b3e5',
      true,
    ])
  })

  it("keeps an OpenSSL 3 context's parameters across derives until reset (RFC 6070's PBKDF2-SHA1 values)", () => {
    expect(
      lua(`local to_hex = require("resty.string").to_hex
           local k = assert(require("resty.openssl.kdf").new("PBKDF2"))
           local one = k:derive(20, { pass = "password", salt = "salt", iter = 1, digest = "sha1" }, 4)
           local kept = k:derive(20, { iter = 2 })
           local ok = k:reset()
           local _, err = k:derive(20, { salt = "salt", iter = 2, digest = "sha1" })
           assert(k:set_params({ pass = "password", salt = "salt", iter = 4096, digest = "sha1" }))
           return to_hex(one), to_hex(kept), ok, err, to_hex(k:derive(20)), k:get_provider_name()`),
    ).toEqual([
      '0c60c80f961f0e71f3a9b524af6012062fe037a6',
      'ea6c014dc72d6f8ccd1ed92ace1d41f0d8de8957',
      true,
      'kdf:derive: missing pass',
      '4b007901b765489abead49d926f721d065a429c1',
      'default',
    ])
  })

  it('rand.bytes gives that many bytes', () => {
    expect(lua(`local b = require("resty.openssl.rand").bytes(24) return #b`)).toEqual([24])
  })
})

describe('cjson', () => {
  it('encodes integer keys with holes as lua-cjson does: an array with nulls, refused when excessively sparse', () => {
    expect(
      lua(`local cjson = require "cjson"
           local ok, err = pcall(cjson.encode, { [20] = "a" })
           return cjson.encode({ a = { [2] = "x" } }), cjson.encode({ [1] = "a", [3] = "c" }),
             cjson.encode(setmetatable({ "a", nil, "c" }, cjson.array_mt)), cjson.encode({ [1] = "a", ["2"] = "b" }), ok, err`),
    ).toEqual([
      '{"a":[null,"x"]}',
      '["a",null,"c"]',
      '["a",null,"c"]',
      expect.stringMatching(/^\{("1":"a","2":"b"|"2":"b","1":"a")\}$/),
      false,
      'Cannot serialise table: excessively sparse array',
    ])
  })

  it('decodes a control character inside a string as it is, as lua-cjson does; outside one it is still refused', () => {
    const [body, tab, err] = lua(`local cjson = require "cjson.safe"
      local t = cjson.decode('{"body": "<a>\\n  <b/>\\n</a>", "t": "x\\ty"}')
      return t.body, t.t, select(2, cjson.decode('{"a": 1,\\u{1} "b": 2}'))`) as string[]
    expect([body, tab]).toEqual(['<a>\n  <b/>\n</a>', 'x\ty'])
    expect(String(err)).toMatch(/^Expected .* at character/)
  })
})

describe('resty.aes', () => {
  it("derives key and iv as OpenSSL's EVP_BytesToKey (the openssl command line's values) and decrypts back", () => {
    expect(
      lua(`local aes, str = require "resty.aes", require "resty.string"
           local md5 = aes:new("AKeyForAES")
           local e1 = md5:encrypt("Secret message!")
           local with_iv = assert(aes:new("1234567890123456", nil, aes.cipher(128, "cbc"), { iv = "1234567890123456" }))
           local e2 = with_iv:encrypt("Really secret message!")
           return str.to_hex(e1), md5:decrypt(e1), str.to_hex(e2), with_iv:decrypt(e2)`),
    ).toEqual([
      '6d87d6b11c6bf0dcb76d1aa611520b3c',
      'Secret message!',
      'f9fa30df0325a7680327842c6a232e7838f7149d80cb8a669cf503a45afc2fa5',
      'Really secret message!',
    ])
  })

  it('answers GCM encryption as { ciphertext, tag } and refuses a wrong tag', () => {
    expect(
      lua(`local aes = require "resty.aes"
           local gcm = assert(aes:new(string.rep("k", 32), nil, aes.cipher(256, "gcm"), { iv = string.rep("i", 12) }))
           local out = gcm:encrypt("hello", "aad")
           return type(out), #out[2], gcm:decrypt(out[1], out[2], "aad"), gcm:decrypt(out[1], string.rep("x", 16), "aad")`),
    ).toEqual(['table', 16, 'hello', undefined, 'EVP_DecryptFinal_ex failed'])
  })

  it('refuses a salt that is not 8 bytes and a key of the wrong length', () => {
    expect(
      lua(`local aes = require "resty.aes"
           local _, e1 = aes:new("k", "short")
           local _, e2 = aes:new("short", nil, aes.cipher(128), { iv = "1234567890123456" })
           return e1, e2`),
    ).toEqual(['salt must be 8 characters or nil', 'bad key length'])
  })
})

describe('resty.lock', () => {
  it('locks, refuses a second holder (timeout: nobody else runs in a replay), unlocks', () => {
    expect(
      lua(`local lock = require "resty.lock"
           local a, b = lock:new("locks"), lock:new("locks")
           local t = a:lock("k")
           local _, busy = b:lock("k")
           local _, again = a:lock("k")
           local u = a:unlock()
           local _, twice = a:unlock()
           local _, nodict = lock:new(nil)
           return t, busy, again, u, twice, b:lock("k"), nodict`),
    ).toEqual([0, 'timeout', 'locked', 1, 'unlocked', 0, 'dictionary not found'])
  })
})

describe('LuaSocket', () => {
  it('socket.gettime is the wall clock in seconds; making a socket stops the run naming it', () => {
    const before = Date.now() / 1000
    const [t, ok, err] = lua(`local socket = require "socket"
      local ok, err = pcall(socket.tcp)
      return socket.gettime(), ok, err`) as [number, boolean, string]
    expect(Math.abs(t - before)).toBeLessThan(5)
    expect(ok).toBe(false)
    expect(err).toContain('socket.tcp() is not emulated by broker')
  })
})

describe('ngx.re with a pattern PCRE does not compile', () => {
  it("answers nil, err in each function's shape, as OpenResty does, instead of raising", () => {
    const out = lua(`local bad = "(unclosed"
      local m, e1 = ngx.re.match("x", bad)
      local f, fto, e2 = ngx.re.find("x", bad)
      local it, e3 = ngx.re.gmatch("x", bad)
      local s, n, e4 = ngx.re.sub("x", bad, "y")
      local g, gn, e5 = ngx.re.gsub("x", bad, "y")
      local sp, e6 = require("ngx.re").split("x", bad)
      return m, f, fto, it, s, n, g, gn, sp, e1, e2, e3, e4, e5, e6`)
    expect(out.slice(0, 9)).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
    ])
    for (const e of out.slice(9)) expect(String(e)).toMatch(/^pcre_compile\(\) failed: .* in "\(unclosed"$/)
    // PCRE reads a `]` right after `[` as a member, so "[]" is a class never closed
    expect(String(lua(`return select(3, ngx.re.find("x", "[]", "jo"))`)[0])).toMatch(
      /^pcre_compile\(\) failed: .* in "\[\]"$/,
    )
  })

  it('still raises for a flag it does not know and for PCRE it cannot translate faithfully', () => {
    expect(String(lua(`return select(2, pcall(ngx.re.match, "x", "x", "Z"))`)[0])).toContain('unknown flag "Z"')
    expect(String(lua(`return select(2, pcall(ngx.re.match, "x", "(?>x)"))`)[0])).toContain('atomic')
  })
})

describe('ngx time and checksum functions', () => {
  it('formats as lua-nginx-module documents: http_time, cookie_time with a two-digit year until 2037', () => {
    expect(
      lua(`return ngx.http_time(1290079655), ngx.cookie_time(1290079655), ngx.cookie_time(2240524800),
             ngx.parse_http_time("Thu, 18 Nov 2010 11:27:35 GMT")`),
    ).toEqual([
      'Thu, 18 Nov 2010 11:27:35 GMT',
      'Thu, 18-Nov-10 11:27:35 GMT',
      'Mon, 31-Dec-2040 00:00:00 GMT',
      1290079655,
    ])
  })

  it('gives zlib CRC-32 values for crc32_short and crc32_long', () => {
    expect(
      lua(
        `return ngx.crc32_short("hello"), ngx.crc32_long("The quick brown fox jumps over the lazy dog"), ngx.crc32_short("")`,
      ),
    ).toEqual([907060870, 1095738169, 0])
  })
})
