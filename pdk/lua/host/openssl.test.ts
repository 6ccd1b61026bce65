import { createHash, createHmac, generateKeyPairSync, sign, verify } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { LIB_DIR } from '../modules.js'
import { createVm } from '../engine.js'
import { LuaRef } from '../vm.js'
import { OPENSSL_OPS } from './openssl.js'

// broker's resty.openssl.digest / mac / pkey, loaded from their files in a bare VM whose __host
// answers with the openssl operations only, checked against node:crypto computing the same thing.
const vm = await createVm({ heapLimit: 32 * 1024 * 1024 })
afterAll(() => vm.close())
vm.register('__host', (op, ...args) => OPENSSL_OPS[String(op)]!(undefined as never, ...args))
for (const name of [
  'resty.openssl.digest',
  'resty.openssl.mac',
  'resty.openssl.pkey',
  'broker.input_parts',
  'broker.hmac_object',
]) {
  const file = `${name.replaceAll('.', '/')}.lua`
  const src = readFileSync(join(LIB_DIR, file), 'utf8')
  vm.run(`package.preload["${name}"] = assert(load(${JSON.stringify(src)}, "@${file}"))`, '=preload')
}
vm.run('function run(code, ...) return assert(load(code, "=test"))(...) end', '=run')
const lua = (code: string, ...args: unknown[]) => vm.call('run', code, ...args)

const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 })
const ec = generateKeyPairSync('ec', { namedCurve: 'prime256v1' })
const ed = generateKeyPairSync('ed25519')
const pem = (k: { export(o: object): string | Buffer }, type = 'spki') => String(k.export({ format: 'pem', type }))
const data = Buffer.from('header.claims')

describe('resty.openssl.digest', () => {
  it('hashes what update and final were given, then starts afresh', () => {
    const [first, second, sha1] = lua(`
      local d = require("resty.openssl.digest").new("sha256")
      assert(d:update("a", "b"))
      local first = d:final("c")
      local second = d:final("xyz")
      return first, second, require("resty.openssl.digest").new():final("abc")`)
    expect(first).toEqual(createHash('sha256').update('abc').digest())
    expect(second).toEqual(createHash('sha256').update('xyz').digest())
    expect(sha1).toEqual(createHash('sha1').update('abc').digest())
  })

  it('forgets the input on reset, and knows OpenSSL names in either case', () => {
    const [out, ok] = lua(`
      local d = require("resty.openssl.digest").new("SHA512")
      d:update("dropped")
      local ok = d:reset()
      return d:final("kept"), ok`)
    expect(out).toEqual(createHash('sha512').update('kept').digest())
    expect(ok).toBe(true)
  })

  it('answers nil, err for an unknown digest or an update that is not a string', () => {
    expect(
      lua(`local digest = require "resty.openssl.digest"
           local d, err = digest.new("sha999")
           local ok, err2 = digest.new("sha256"):update({})
           local _, err3 = digest.new({})
           return d, err, ok, err2, err3`),
    ).toEqual([
      undefined,
      'digest.new: invalid digest type "sha999"',
      undefined,
      'digest:update: expects a string at #1, got table',
      'digest.new: expects a string digest name, got table',
    ])
  })
})

describe('resty.openssl.mac', () => {
  it('computes an HMAC with the digest named, as Kong calls it: new(key, "HMAC", nil, md):final(data)', () => {
    const [a, b] = lua(`
      local mac = require "resty.openssl.mac"
      local m = mac.new("secret", "HMAC", nil, "sha384")
      m:update("part1")
      return mac.new("secret", "HMAC", nil, "sha256"):final("data"), m:final("part2")`)
    expect(a).toEqual(createHmac('sha256', 'secret').update('data').digest())
    expect(b).toEqual(createHmac('sha384', 'secret').update('part1part2').digest())
  })

  it('answers nil, err for a MAC other than HMAC, a cipher, an unknown digest or no key', () => {
    expect(
      lua(`local mac = require "resty.openssl.mac"
           local _, e1 = mac.new("k", "CMAC", "aes-128-cbc")
           local _, e2 = mac.new("k", "HMAC", "aes-128-cbc", "sha256")
           local _, e3 = mac.new("k", "HMAC", nil, "nope")
           local _, e4 = mac.new(nil, "HMAC", nil, "sha256")
           return e1, e2, e3, e4`),
    ).toEqual([
      'mac.new: only HMAC is emulated by broker, not CMAC',
      'mac.new: HMAC takes no cipher',
      'mac.new: invalid digest type "nope"',
      'mac.new: expects a string key, got nil',
    ])
  })
})

describe('resty.openssl.pkey', () => {
  it('verifies an RS256 signature with a PEM public key, and refuses it for other data', () => {
    const sig = sign('sha256', data, rsa.privateKey)
    expect(
      lua(
        `local pkey = require "resty.openssl.pkey"
         local k = assert(pkey.new(...))
         local sig, data = select(2, ...)
         return k:verify(sig, data, "sha256"), k:verify(sig, data .. "x", "sha256"), k:verify(sig, data, "sha512")`,
        pem(rsa.publicKey),
        sig,
        data,
      ),
    ).toEqual([true, false, false])
  })

  it('verifies ES256 in the raw r||s form Kong passes (ecdsa_use_raw), and the DER form without it', () => {
    const raw = sign('sha256', data, { key: ec.privateKey, dsaEncoding: 'ieee-p1363' })
    const der = sign('sha256', data, ec.privateKey)
    expect(raw).toHaveLength(64)
    expect(
      lua(
        `local pkey = require "resty.openssl.pkey"
         local key, raw, der, data = ...
         local k = assert(pkey.new(key))
         local opts = { ecdsa_use_raw = true }
         return k:verify(raw, data, "sha256", nil, opts), k:verify(der, data, "sha256"),
           k:verify(der, data, "sha256", nil, opts), k:verify(("\\7"):rep(64), data, "sha256", nil, opts)`,
        pem(ec.publicKey),
        raw,
        der,
        data,
      ),
    ).toEqual([true, true, false, false])
  })

  it('reads a JWK and a binary DER key, and an Ed25519 key verifies without a digest name', () => {
    const jwk = JSON.stringify(ec.publicKey.export({ format: 'jwk' }))
    const derKey = rsa.publicKey.export({ format: 'der', type: 'spki' })
    const rsSig = sign('sha512', data, rsa.privateKey)
    const edSig = sign(null, data, ed.privateKey)
    const ecSig = sign('sha256', data, { key: ec.privateKey, dsaEncoding: 'ieee-p1363' })
    expect(
      lua(
        `local pkey = require "resty.openssl.pkey"
         local jwk, der, ed, rs_sig, ed_sig, ec_sig, data = ...
         local j, d, e = assert(pkey.new(jwk)), assert(pkey.new(der)), assert(pkey.new(ed))
         return j:verify(ec_sig, data, "sha256", nil, { ecdsa_use_raw = true }), d:verify(rs_sig, data, "sha512"),
           e:verify(ed_sig, data), j:get_key_type().sn, d:get_key_type().sn, e:get_key_type().sn, d:is_private()`,
        jwk,
        derKey,
        pem(ed.publicKey),
        rsSig,
        edSig,
        ecSig,
        data,
      ),
    ).toEqual([true, true, true, 'id-ecPublicKey', 'rsaEncryption', 'ED25519', false])
  })

  it('signs with a private key (PKCS#1, PSS, raw ECDSA, a digest object) what node:crypto verifies', () => {
    const [pkcs1, pss, ecRaw, viaDigest] = lua(
      `local pkey = require "resty.openssl.pkey"
       local rsa_pem, ec_pem, data = ...
       local r, e = assert(pkey.new(rsa_pem)), assert(pkey.new(ec_pem))
       local d = require("resty.openssl.digest").new("sha384")
       d:update(data)
       return r:sign(data, "sha256"), r:sign(data, "sha256", pkey.PADDINGS.RSA_PKCS1_PSS_PADDING),
         e:sign(data, "sha256", nil, { ecdsa_use_raw = true }), r:sign(d)`,
      pem(rsa.privateKey, 'pkcs8'),
      pem(ec.privateKey, 'pkcs8'),
      data,
    ) as Buffer[]
    expect(verify('sha256', data, rsa.publicKey, pkcs1!)).toBe(true)
    expect(verify('sha256', data, { key: rsa.publicKey, padding: 6, saltLength: 32 }, pss!)).toBe(true)
    expect(verify('sha256', data, { key: ec.publicKey, dsaEncoding: 'ieee-p1363' }, ecRaw!)).toBe(true)
    expect(verify('sha384', data, rsa.publicKey, viaDigest!)).toBe(true)
  })

  it('gives the PEM of either half, and refuses to sign with a public key', () => {
    const [pub, priv, sig, err] = lua(
      `local pkey = require "resty.openssl.pkey"
       local k = assert(pkey.new(...))
       local pub = assert(pkey.new(k:to_PEM("public")))
       return pub:to_PEM(), k:to_PEM("private"), pub:sign("x")`,
      pem(rsa.privateKey, 'pkcs8'),
    )
    expect(pub).toBe(pem(rsa.publicKey))
    expect(priv).toBe(pem(rsa.privateKey, 'pkcs8'))
    expect([sig, err]).toEqual([undefined, 'pkey:sign: a private key is needed to sign'])
  })

  it('answers nil, err for a digest name or a padding of the wrong type, naming no address', () => {
    expect(
      lua(
        `local k = assert(require("resty.openssl.pkey").new(...))
         local r1, e1 = k:verify("sig", "data", {})
         local r2, e2 = k:sign("data", "sha256", "pss")
         local r3, e3 = k:verify("sig", "data", "sha256", 6.5)
         return r1, e1, r2, e2, r3, e3`,
        pem(rsa.privateKey, 'pkcs8'),
      ),
    ).toEqual([
      undefined,
      'pkey:verify: expects a string digest name, got table',
      undefined,
      'pkey:sign: expects a padding number (pkey.PADDINGS), got string',
      undefined,
      'pkey:verify: expects a padding number (pkey.PADDINGS), got number',
    ])
  })

  it('answers nil, err for text that is no key, a key of the wrong half, or a table', () => {
    const notKey = 'pkey.new: could not read the key (PEM, DER or JWK of an RSA, EC or Ed25519 key expected)'
    expect(
      lua(
        `local pkey = require "resty.openssl.pkey"
         local _, e1 = pkey.new("-----BEGIN PUBLIC KEY-----\\nnot base64\\n-----END PUBLIC KEY-----")
         local _, e2 = pkey.new("{ not json")
         local _, e3 = pkey.new(..., { type = "pr" })
         local _, e4 = pkey.new({ type = "RSA" })
         local _, e5 = pkey.new(42)
         return e1, e2, e3, e4, e5`,
        pem(rsa.publicKey),
      ),
    ).toEqual([
      notKey,
      notKey,
      notKey,
      'pkey.new: generating a key is not emulated by broker',
      'pkey.new: expects a string key, got number',
    ])
  })
})

describe('the openssl host operations', () => {
  it('name a value that is not a string by its type, never by its address', () => {
    const op = OPENSSL_OPS.ossl_digest_known!
    expect(op(undefined as never, new LuaRef('table', 0x1234))).toEqual([
      undefined,
      'digest.new: invalid digest type (a table)',
    ])
    expect(op(undefined as never, 'md5')).toEqual([true])
  })
})
