import { generateKeyPairSync } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { normalizeOAuth1, signerOf, validateOAuth1 } from './record.js'

const pem = generateKeyPairSync('rsa', { modulusLength: 1024 })
  .privateKey.export({ type: 'pkcs8', format: 'pem' })
  .toString()

describe('normalizeOAuth1', () => {
  it('defaults signature_method to HMAC-SHA1', () => {
    expect(normalizeOAuth1({ auth_type: 'oauth' }).signature_method).toBe('HMAC-SHA1')
  })

  it('reads "_" as "-" and any case, as Guardian did', () => {
    expect(normalizeOAuth1({ auth_type: 'oauth', signature_method: 'hmac_sha256' }).signature_method).toBe(
      'HMAC-SHA256',
    )
    expect(normalizeOAuth1({ auth_type: 'oauth', signature_method: ' RSA_SHA1 ' }).signature_method).toBe('RSA-SHA1')
  })

  it('restores the line breaks of a PEM pasted with literal \\n', () => {
    const flat = pem.replace(/\n/g, '\\n')
    expect(normalizeOAuth1({ auth_type: 'oauth', private_key: flat }).private_key).toBe(pem)
  })

  it('takes access_token/access_secret as the stored token, never over oauth_token', () => {
    expect(normalizeOAuth1({ auth_type: 'oauth', access_token: 'a', access_secret: 'b' })).toMatchObject({
      oauth_token: 'a',
      oauth_token_secret: 'b',
    })
    expect(normalizeOAuth1({ auth_type: 'oauth', access_token: 'a', oauth_token: 'o' }).oauth_token).toBe('o')
  })
})

describe('validateOAuth1', () => {
  const v = (r: Record<string, unknown>) => validateOAuth1(normalizeOAuth1({ auth_type: 'oauth', ...r }))

  it('accepts each method with what it needs', () => {
    expect(v({ consumer_secret: 's' })).toEqual({})
    expect(v({ consumer_secret: 's', signature_method: 'PLAINTEXT' })).toEqual({})
    expect(v({ signature_method: 'RSA-SHA1', private_key: pem })).toEqual({})
  })

  it('names an unknown method', () => {
    expect(v({ consumer_secret: 's', signature_method: 'HMAC-MD5' }).signature_method).toMatch(
      /^must be one of HMAC-SHA1, HMAC-SHA256, RSA-SHA1, PLAINTEXT/,
    )
  })

  it('wants consumer_secret for the HMAC methods and PLAINTEXT', () => {
    expect(v({ signature_method: 'PLAINTEXT' })).toEqual({ consumer_secret: 'is required for PLAINTEXT' })
  })

  it('wants a readable RSA private key for RSA-SHA1', () => {
    expect(v({ signature_method: 'RSA-SHA1' }).private_key).toMatch(/is required/)
    expect(v({ signature_method: 'RSA-SHA1', private_key: 'hello' }).private_key).toBe(
      'is not a readable PEM private key',
    )
  })

  it('wants oauth_token with its secret', () => {
    expect(v({ consumer_secret: 's', oauth_token_secret: 'x' })).toEqual({
      oauth_token: 'is required with oauth_token_secret',
    })
  })
})

describe('signerOf', () => {
  it('signs with the stored token unless given another', () => {
    const record = normalizeOAuth1({
      auth_type: 'oauth',
      consumer_key: 123,
      consumer_secret: 's',
      oauth_token: 't',
      oauth_token_secret: 'ts',
      realm: 'R',
    })
    expect(signerOf(record)).toEqual({
      consumerKey: '123',
      consumerSecret: 's',
      signatureMethod: 'HMAC-SHA1',
      privateKey: undefined,
      token: { key: 't', secret: 'ts' },
      realm: 'R',
    })
    expect(signerOf(record, { key: 'req', secret: 'rs' }).token).toEqual({ key: 'req', secret: 'rs' })
  })
})
