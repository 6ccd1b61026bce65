import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { onUseHint } from './manifest/index.js'
import { FALLBACK_DIR, LIB_DIR, ModuleFinder, notEmulated } from './modules.js'

describe('the hint for a module broker does not emulate', () => {
  it('names the resty.openssl submodule asked for, and what is emulated beside it', () => {
    expect(notEmulated('resty.openssl.x509.chain')).toMatch(/^of X\.509, broker emulates reading a certificate/)
    expect(notEmulated('resty.openssl.x509.csr')).toBe(notEmulated('resty.openssl.x509.chain'))
    // emulated: found among broker's own modules, so the hint is never asked for
    for (const m of ['hmac', 'cipher', 'kdf', 'rand', 'bn', 'x509', 'x509.name', 'x509.altname'])
      expect(Array.isArray(new ModuleFinder([]).find(`resty.openssl.${m}`))).toBe(false)
    expect(notEmulated('resty.openssl.pkcs12')).toBe(
      'of the OpenSSL bindings broker emulates resty.openssl (the root), digest, mac, hmac, pkey, cipher, kdf, rand, bn and x509 (with x509.name and x509.altname)',
    )
    expect(notEmulated('string.buffer')).toBeUndefined()
    expect(notEmulated('lua_pack')).toBeUndefined()
    // a pure-Lua rock whose core is C: installing it would not help, so the hint says so (opentelemetry needs it)
    expect(notEmulated('protoc')).toMatch(/core \(pb\) is a C module .*installing the rock does not help$/)
    // C rocks Kong's bundled plugins require: named as C, not as rocks to install
    for (const m of ['argon2', 'bcrypt']) expect(notEmulated(m)).toMatch(/a C module/)
    // file-log's flags, beside the ffi it writes with
    expect(notEmulated('lua_system_constants')).toBeUndefined()
  })
})

describe('the modules that load but fail on use', () => {
  it('keeps resty.http off the refused list, with a hint for its use: the fixture\'s "outbound", or a stub', () => {
    expect(notEmulated('resty.http')).toBeUndefined()
    expect(onUseHint('resty.http')).toMatch(
      /a replay opens no connection: .*"outbound" list.*stub resty\.http .* on lua_path$/,
    )
    expect(new ModuleFinder([]).find('resty.http')).toMatchObject({ file: join(FALLBACK_DIR, 'resty', 'http.lua') })
  })
})

describe('resty.ada', () => {
  it("is broker's own, on Node's URL: no longer refused", () => {
    expect(notEmulated('resty.ada')).toBeUndefined()
    expect(new ModuleFinder([]).find('resty.ada.search')).toMatchObject({
      file: join(LIB_DIR, 'resty', 'ada', 'search.lua'),
    })
  })
})

describe('where require finds a module', () => {
  it("takes broker's resty.redis only when no root has one: a stub of the user's own wins", () => {
    const root = mkdtempSync(join(tmpdir(), 'broker-modules-'))
    try {
      const found = (roots: string[]) => {
        const hit = new ModuleFinder(roots).find('resty.redis')
        return Array.isArray(hit) ? undefined : hit.file
      }
      expect(found([root])).toBe(join(FALLBACK_DIR, 'resty', 'redis.lua'))
      mkdirSync(join(root, 'resty'))
      writeFileSync(join(root, 'resty', 'redis.lua'), 'return {}')
      expect(found([root])).toBe(join(root, 'resty', 'redis.lua'))
      // the modules broker emulates because Kong's are C or FFI still win over a root's
      writeFileSync(join(root, 'luatz.lua'), 'return {}')
      expect(new ModuleFinder([root]).find('luatz')).toMatchObject({ file: join(LIB_DIR, 'luatz', 'init.lua') })
    } finally {
      rmSync(root, { recursive: true, force: true })
    }
  })
})

describe('the hint for an OpenResty core module or a C module', () => {
  it('says what it is and what broker offers instead, never to install it', () => {
    expect(notEmulated('ngx.balancer')).toMatch(/^an OpenResty core module .*kong\.service\.set_target/)
    expect(notEmulated('resty.core.regex')).toMatch(/^an OpenResty core module/)
    expect(notEmulated('pb')).toBe('lua-protobuf is a C module; it is not emulated')
    expect(notEmulated('ffi-zlib')).toMatch(/kong\.tools\.gzip .* is emulated/)
    for (const m of ['ngx.ssl', 'ngx.errlog', 'lsyslog']) expect(notEmulated(m)).not.toMatch(/install/i)
    // a Kong 2.x plugin (nokia's kong-oidc, jwt-keycloak) on Kong 3.x
    expect(notEmulated('kong.plugins.base_plugin')).toMatch(/^Kong 3\.0 removed it/)
  })
})
