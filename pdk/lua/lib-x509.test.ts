import { generateKeyPairSync } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { kitFor } from '../runner/harness.js'
import { LuaRuntime } from './runtime.js'

// lua-resty-openssl's x509, x509.name and x509.altname on a CA and a leaf made with the openssl command line
// (fixtures/pdk/lua/certs: a self-signed RSA CA, an EC P-256 leaf it signed with SHA-384, serial 0x1234abcd, a
// subject alternative name, OCSP and CRL URLs). The expected values are what `openssl x509 -text`, `-fingerprint`
// and `-dates` print for them.
const certs = resolve(import.meta.dirname, '../../fixtures/pdk/lua/certs')
const pem = (name: string) => readFileSync(join(certs, name), 'latin1')
const rt = await LuaRuntime.bare(kitFor({}, 'access'))
afterAll(() => rt.close())
const lua = (code: string) => {
  rt.vm.run(`function __t(ca, leaf, key) local x509 = require "resty.openssl.x509" ${code} end`, '=test')
  return rt.vm.call('__t', pem('ca.pem'), pem('leaf.pem'), pem('leaf.key'))
}

describe('resty.openssl.x509', () => {
  it("reads a certificate's names, dates, serial, version and signature algorithm", () => {
    expect(
      lua(`local c = assert(x509.new(leaf))
           local cn = c:get_subject_name():find("CN")
           return c:get_subject_name():tostring(), c:get_issuer_name():tostring(), cn.blob, cn.nid, cn.ln,
             c:get_not_before(), c:get_not_after(), c:get_serial_number():to_hex(), c:get_version(),
             c:get_signature_name(), c:get_signature_nid(), c:get_signature_digest_name()`),
    ).toEqual([
      'CN=api.example.com/O=Broker, Test',
      'C=US/CN=Broker Test CA/O=Broker Test',
      'api.example.com',
      13,
      'commonName',
      1795822552,
      4949422552,
      '1234ABCD',
      2,
      'RSA-SHA384',
      669,
      'SHA384',
    ])
  })

  it('reads the extensions: alternative names, basic constraints, OCSP and CRL URLs', () => {
    expect(
      lua(`local c, ca = x509.new(leaf), x509.new(ca)
           local names = {}
           for kind, value in pairs(c:get_subject_alt_name()) do names[#names + 1] = kind .. "=" .. value end
           return table.concat(names, " "), #c:get_subject_alt_name(), c:get_basic_constraints(),
             ca:get_basic_constraints("ca"), ca:get_basic_constraints("pathlen"), ca:get_basic_constraints_critical(),
             c:get_ocsp_url(), c:get_crl_url(), ca:get_ocsp_url()`),
    ).toEqual([
      'DNS=api.example.com IP=127.0.0.1 URI=https://api.example.com/',
      3,
      undefined,
      true,
      1,
      true,
      'http://ocsp.example.com/',
      'http://crl.example.com/ca.crl',
      undefined,
    ])
  })

  it('digests the certificate and its key, and gives the key as a pkey that verifies', () => {
    expect(
      lua(`local hex = require("resty.string").to_hex
           local c = x509.new(leaf)
           local priv = require("resty.openssl.pkey").new(key)
           local sig = priv:sign("hello", "sha256")
           return hex(c:digest("sha256")), hex(c:digest()), hex(c:pubkey_digest()), c:get_pubkey():get_key_type().sn,
             c:get_pubkey():verify(sig, "hello", "sha256"), c:check_private_key(priv)`),
    ).toEqual([
      '82b3a4e633edd8abe34f74ba465fd649dfeea3217c864cb54ebbedd01e808f0c',
      '4add6e56802dd3670d094a98711dee50eeee278f',
      '46fd5f2f669c876f214046f360661c19819ff450',
      'id-ecPublicKey',
      true,
      true,
    ])
  })

  it('verifies a signature with the issuer key, refuses another, and reads DER as it reads PEM', () => {
    expect(
      lua(`local c, ca = x509.new(leaf), x509.new(ca)
           local ok1 = c:verify(ca:get_pubkey())
           local ok2, err = c:verify(c:get_pubkey())
           local der = c:tostring("DER")
           local again = x509.new(der, "DER")
           return ok1, ok2, err, again:get_subject_name():tostring(), again:to_PEM() == leaf, x509.istype(again)`),
    ).toEqual([
      true,
      false,
      "x509:verify: the certificate's signature does not match the key",
      'CN=api.example.com/O=Broker, Test',
      true,
      true,
    ])
  })

  it('answers nil, err for what is no certificate and for making one', () => {
    expect(
      lua(`local _, e1 = x509.new("not a certificate")
           local _, e2 = x509.new(leaf, "DER")
           local _, e3 = x509.new()
           local _, e4 = x509.new(leaf):set_not_before(0)
           return e1, e2, e3, e4`),
    ).toEqual([
      'x509.new: could not read the certificate (PEM or DER expected)',
      'x509.new: could not read the certificate (PEM or DER expected)',
      'x509.new() without a certificate is not emulated by broker (certificates are read, not made)',
      'x509:set_not_before is not emulated by broker (certificates are read, not made)',
    ])
  })
})

describe('resty.openssl.x509.name and altname', () => {
  it('builds names as the README shows: add, find from a position, tostring sorted, #, name[i]', () => {
    expect(
      lua(`local name = require("resty.openssl.x509.name").new()
           name:add("CN", "example.com"):add("CN", "example2.com"):add("C", "US")
           local first, p1 = name:find("CN")
           local second, p2 = name:find("2.5.4.3", 1)
           local third = name[3]
           local _, _, err = name:find("nope")
           return first.blob, p1, second.blob, p2, name:tostring(), #name, third.sn, third.blob, err`),
    ).toEqual([
      'example.com',
      1,
      'example2.com',
      2,
      'C=US/CN=example.com/CN=example2.com',
      3,
      'C',
      'US',
      'x509.name:find: invalid NID text nope',
    ])
  })

  it('builds an altname and iterates it', () => {
    expect(
      lua(`local a = require("resty.openssl.x509.altname").new():add("DNS", "a.test"):add("email", "x@a.test")
           local out = {}
           for kind, value in pairs(a) do out[#out + 1] = kind .. ":" .. value end
           return table.concat(out, ","), #a, a[2][2], select(2, a:add("bogus", "x"))`),
    ).toEqual(['DNS:a.test,email:x@a.test', 2, 'x@a.test', 'x509.altname:gn_set: unknown type bogus'])
  })
})

// lua-resty-jwt's own FFI modules, resty.evp and resty.hmac (jkeys089's), on the same certificates: the rock's
// jwt.lua runs on them unchanged (its HS256, RS256, PS384 and ES256 tokens, an x5c certificate checked against a
// file of trusted certificates).
describe('resty.evp and resty.hmac', () => {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
  const rsa = privateKey.export({ format: 'pem', type: 'pkcs8' }).toString()
  const evp = (code: string) => {
    rt.vm.run(`function __t(ca_file, leaf, key, rsa) local evp = require "resty.evp" ${code} end`, '=test')
    return rt.vm.call('__t', join(certs, 'ca.pem'), pem('leaf.pem'), pem('leaf.key'), rsa)
  }

  it('reads a certificate, its fingerprint, and checks it against a file of trusted certificates', () => {
    // a file holding the leaf alone trusts nothing: OpenSSL wants the chain to end at a self-signed certificate
    const dir = mkdtempSync(join(tmpdir(), 'broker-evp-'))
    const leafOnly = join(dir, 'leaf-only.pem')
    writeFileSync(leafOnly, pem('leaf.pem'))
    try {
      expect(
        evp(`local cert = assert(evp.Cert:new(leaf))
             local der = assert(evp.Cert:new(cert:get_der()))
             local ok, err = der:verify_trust(ca_file)
             local ca = assert(evp.Cert:new(io.open(ca_file):read("*a")))
             return cert:get_fingerprint("SHA256"), ok, err, ca:verify_trust(ca_file),
               select(2, cert:verify_trust(${JSON.stringify(leafOnly)})), select(2, ca:verify_trust(${JSON.stringify(leafOnly)}))`),
      ).toEqual([
        '82:B3:A4:E6:33:ED:D8:AB:E3:4F:74:BA:46:5F:D6:49:DF:EE:A3:21:7C:86:4C:B5:4E:BB:ED:D0:1E:80:8F:0C',
        true,
        undefined,
        true,
        'unable to get local issuer certificate',
        'self-signed certificate',
      ])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('signs ECDSA as DER, turns it into JOSE r||s, and verifies that with the certificate', () => {
    expect(
      evp(`local signer = assert(evp.ECSigner:new(key))
           local der = assert(signer:sign("payload", evp.CONST.SHA256_DIGEST))
           local raw = assert(signer:get_raw_sig(der))
           local verifier = evp.ECVerifier:new(evp.Cert:new(leaf))
           local ok = verifier:verify("payload", raw, "SHA256")
           local bad, err = verifier:verify("other", raw, "SHA256")
           return der:byte(1), #raw, ok, bad, err`),
    ).toEqual([0x30, 64, true, false, 'Verification failed'])
  })

  it('signs and verifies RSA, PKCS#1 v1.5 and PSS, with a public key', () => {
    expect(
      evp(`local pub = require("resty.openssl.pkey").new(rsa):to_PEM("public")
           local v15 = evp.RSASigner:new(rsa):sign("m", "SHA256")
           local pss = evp.RSASigner:new(rsa, nil, evp.CONST.RSA_PKCS1_PSS_PADDING):sign("m", "SHA384")
           local key = evp.PublicKey:new(pub)
           return evp.RSAVerifier:new(key):verify("m", v15, "SHA256"),
             evp.RSAVerifier:new(key, evp.CONST.RSA_PKCS1_PSS_PADDING):verify("m", pss, "SHA384"),
             evp.RSAVerifier:new(key):verify("m", pss, "SHA384"), select(2, evp.RSAEncryptor.new(evp.RSAEncryptor, key))`),
    ).toEqual([true, true, false, "resty.evp: RSA encryption (JWE's RSA-OAEP) is not emulated by broker"])
  })

  it("answers resty.hmac's RFC 2104 values, MD5 by default, hex on request", () => {
    expect(
      evp(`local hmac = require "resty.hmac"
           local fox = "The quick brown fox jumps over the lazy dog"
           local h = hmac:new("key", hmac.ALGOS.SHA256)
           h:update("The quick brown fox ")
           return h:final("jumps over the lazy dog", true), hmac:new("key"):final(fox, true),
             #hmac:new("key", hmac.ALGOS.SHA512):final(fox), hmac:new(nil)`),
    ).toEqual([
      'f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8',
      '80070713463e7749b90c2dc24911e275',
      64,
      undefined,
    ])
  })
})

describe('typedefs.certificate and typedefs.key', () => {
  it("refuse a config whose certificate or key does not read, with Kong's message prefix, and accept good ones", () => {
    rt.vm.run(
      `function __schema(conf)
         local typedefs = require "kong.db.schema.typedefs"
         local schema = { fields = { { config = { type = "record", fields = {
           { cert = typedefs.certificate }, { key = typedefs.key } } } } } }
         return require("broker.schema").process(schema, conf)
       end`,
      '=test',
    )
    expect(rt.vm.call('__schema', { cert: pem('leaf.pem'), key: pem('leaf.key') })[0]).toEqual({
      cert: pem('leaf.pem'),
      key: pem('leaf.key'),
    })
    expect(rt.vm.call('__schema', { cert: 'not a certificate', key: 'not a key' })[1]).toEqual({
      cert: 'invalid certificate: x509.new: could not read the certificate (PEM or DER expected)',
      key: 'invalid key: pkey.new: could not read the key (PEM, DER or JWK of an RSA, EC or Ed25519 key expected)',
    })
  })
})
