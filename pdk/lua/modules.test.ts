import { describe, expect, it } from 'vitest'
import { notEmulated } from './modules.js'

describe('the hint for a module broker does not emulate', () => {
  it('names the resty.openssl submodule asked for, and what is emulated beside it', () => {
    expect(notEmulated('resty.openssl.x509')).toMatch(/^X\.509 certificates are not emulated/)
    expect(notEmulated('resty.openssl.x509.chain')).toBe(notEmulated('resty.openssl.x509'))
    expect(notEmulated('resty.openssl.hmac')).toBe('use resty.openssl.mac with "HMAC", which is emulated')
    expect(notEmulated('resty.openssl.pkcs12')).toBe(
      'only resty.openssl.digest, resty.openssl.mac and resty.openssl.pkey of the OpenSSL bindings are emulated',
    )
    expect(notEmulated('string.buffer')).toBeUndefined()
  })
})
