import { generateKeyPairSync, type KeyObject } from 'node:crypto'
import { createRequire } from 'node:module'
import { describe, expect, it } from 'vitest'
import { toList } from '../private/values.js'
import { decode, decrypt, encrypt } from './index.js'

// node-jose is an independent JOSE implementation: tokens it makes must decrypt here and back
interface NjKey {
  toJSON(priv?: boolean): Record<string, unknown>
}
interface NodeJose {
  JWK: { asKey(key: unknown, form?: string): Promise<NjKey> }
  JWE: {
    createEncrypt(opts: Record<string, unknown>, key: NjKey): { update(b: Buffer): { final(): Promise<string> } }
    createDecrypt(key: NjKey): {
      decrypt(token: string): Promise<{ plaintext: Buffer; header: Record<string, unknown> }>
    }
  }
}
const nodeJose = createRequire(import.meta.url)('node-jose') as NodeJose

const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 })
const ec = (namedCurve: string) => generateKeyPairSync('ec', { namedCurve })
const pem = (k: KeyObject, type: 'pkcs8' | 'spki') => k.export({ format: 'pem', type }) as string
const jwk = (k: KeyObject) => k.export({ format: 'jwk' }) as Record<string, unknown>
const der = (k: KeyObject, type: 'pkcs8' | 'spki') => (k.export({ format: 'der', type }) as Buffer).toString('latin1')

const njEncrypt = async (privateJwk: Record<string, unknown>, alg: string, plaintext: string, zip = false) => {
  const key = await nodeJose.JWK.asKey(privateJwk)
  const fields = { alg, enc: 'A256GCM', ...(zip ? { zip: 'DEF' } : {}) }
  return nodeJose.JWE.createEncrypt({ format: 'compact', fields, zip }, key).update(Buffer.from(plaintext)).final()
}
const njDecrypt = async (privateJwk: Record<string, unknown>, token: string) => {
  const key = await nodeJose.JWK.asKey(privateJwk)
  return nodeJose.JWE.createDecrypt(key).decrypt(token)
}

describe('jwe.decode', () => {
  it('gives the five parts as they appear and decoded', async () => {
    const token = (await encrypt('RSA-OAEP', 'A256GCM', pem(rsa.publicKey, 'spki'), 'hi')) as string
    const d = decode(token) as Record<string, unknown>
    const parts = token.split('.')
    expect([d[1], d[2], d[3], d[4], d[5]]).toEqual(parts)
    expect([d[1], d[2], d[3], d[4], d[5]].join('.')).toBe(token)
    expect(d.protected).toEqual({ alg: 'RSA-OAEP', enc: 'A256GCM' })
    expect(d.aad).toBe(parts[0])
    expect((d.iv as string).length).toBe(12)
    expect((d.tag as string).length).toBe(16)
    expect((d.encrypted_key as string).length).toBe(256)
  })

  it('fails unless the token has exactly 5 decodable parts', () => {
    expect(toList(decode('a.b.c'))).toEqual([undefined, 'invalid JWE token: expected 5 parts, got 3'])
    expect(toList(decode('!!.a.b.c.d'))[1]).toContain('failed to decode JWE token')
    expect(toList(decode('bm90anNvbg.a.b.c.d'))[1]).toContain('failed to decode JWE token')
  })
})

describe('jwe.encrypt / decrypt round trips', () => {
  it.each([
    ['RSA-OAEP JWK', 'RSA-OAEP', jwk(rsa.publicKey), jwk(rsa.privateKey)],
    ['RSA-OAEP PEM', 'RSA-OAEP', pem(rsa.publicKey, 'spki'), pem(rsa.privateKey, 'pkcs8')],
    ['RSA-OAEP DER', 'RSA-OAEP', der(rsa.publicKey, 'spki'), der(rsa.privateKey, 'pkcs8')],
    ['ECDH-ES P-256 JWK string', 'ECDH-ES', JSON.stringify(jwk(ec('P-256').publicKey)), undefined],
  ])('%s', async (_name, alg, pub, priv) => {
    let privateKey = priv
    let publicKey = pub
    if (privateKey === undefined) {
      const pair = ec('P-256')
      publicKey = JSON.stringify(jwk(pair.publicKey))
      privateKey = JSON.stringify(jwk(pair.privateKey))
    }
    const token = await encrypt(alg, 'A256GCM', publicKey, 'secret text')
    expect(typeof token).toBe('string')
    expect(await decrypt(privateKey, token as string)).toBe('secret text')
  })

  it.each(['P-256', 'P-384', 'P-521'])('ECDH-ES on %s with PEM keys', async (curve) => {
    const pair = ec(curve)
    const token = (await encrypt('ECDH-ES', 'A256GCM', pem(pair.publicKey, 'spki'), 'x')) as string
    expect((decode(token) as { protected: { epk: { crv: string } } }).protected.epk.crv).toBe(curve)
    expect(await decrypt(pem(pair.privateKey, 'pkcs8'), token)).toBe('x')
  })

  it('deflates with zip DEF', async () => {
    const text = 'a'.repeat(1000)
    const token = (await encrypt('RSA-OAEP', 'A256GCM', jwk(rsa.publicKey), text, { zip: 'DEF' })) as string
    const d = decode(token) as { protected: Record<string, unknown>; ciphertext: string }
    expect(d.protected.zip).toBe('DEF')
    expect(d.ciphertext.length).toBeLessThan(100)
    expect(await decrypt(jwk(rsa.privateKey), token)).toBe(text)
  })

  it('generates apu/apv unless false, and uses given strings', async () => {
    const pair = ec('P-256')
    const header = async (opts: Record<string, unknown>) =>
      (
        decode((await encrypt('ECDH-ES', 'A256GCM', jwk(pair.publicKey), 'x', opts)) as string) as {
          protected: Record<string, string>
        }
      ).protected
    const auto = await header({})
    expect(Buffer.from(auto.apu!, 'base64url')).toHaveLength(16)
    expect(Buffer.from(auto.apv!, 'base64url')).toHaveLength(16)
    const off = await header({ apu: false, apv: false })
    expect(off.apu).toBeUndefined()
    expect(off.apv).toBeUndefined()
    const given = await header({ apu: 'Alice', apv: 'Bob' })
    expect(Buffer.from(given.apu!, 'base64url').toString()).toBe('Alice')
    expect(Buffer.from(given.apv!, 'base64url').toString()).toBe('Bob')
  })

  it('rejects unsupported algorithms, encodings and key types', async () => {
    expect(toList(await encrypt('A128KW', 'A256GCM', jwk(rsa.publicKey), 'x'))).toEqual([
      undefined,
      'unsupported alg: A128KW',
    ])
    expect(toList(await encrypt('RSA-OAEP', 'A128GCM', jwk(rsa.publicKey), 'x'))).toEqual([
      undefined,
      'unsupported enc: A128GCM',
    ])
    const ed = generateKeyPairSync('ed25519')
    expect(toList(await encrypt('ECDH-ES', 'A256GCM', pem(ed.publicKey, 'spki'), 'x'))[1]).toContain(
      'unsupported key type',
    )
    expect(toList(await decrypt(jwk(rsa.privateKey), 'a.b.c'))[1]).toContain('expected 5 parts')
  })

  it('fails to decrypt with the wrong key', async () => {
    const token = (await encrypt('RSA-OAEP', 'A256GCM', jwk(rsa.publicKey), 'x')) as string
    const other = generateKeyPairSync('rsa', { modulusLength: 2048 })
    expect(toList(await decrypt(jwk(other.privateKey), token))[1]).toContain('failed to decrypt JWE token')
  })
})

describe('interoperability with node-jose', () => {
  it.each([
    ['RSA-OAEP', () => rsa, false],
    ['ECDH-ES', () => ec('P-384'), false],
    ['ECDH-ES', () => ec('P-521'), true],
    ['RSA-OAEP', () => rsa, true],
  ] as const)('decrypts node-jose %s tokens', async (alg, pair, zip) => {
    const keys = pair()
    const token = await njEncrypt(jwk(keys.privateKey), alg, 'from node-jose', zip)
    expect(await decrypt(pem(keys.privateKey, 'pkcs8'), token)).toBe('from node-jose')
  })

  it.each([
    ['RSA-OAEP', () => rsa, undefined],
    ['ECDH-ES', () => ec('P-256'), { apu: 'Alice', apv: 'Bob' }],
    ['ECDH-ES', () => ec('P-384'), { zip: 'DEF' }],
  ] as const)('makes %s tokens node-jose decrypts', async (alg, pair, opts) => {
    const keys = pair()
    const token = (await encrypt(alg, 'A256GCM', jwk(keys.publicKey), 'to node-jose', opts)) as string
    const out = await njDecrypt(jwk(keys.privateKey), token)
    expect(out.plaintext.toString()).toBe('to node-jose')
    expect(out.header.alg).toBe(alg)
  })
})
