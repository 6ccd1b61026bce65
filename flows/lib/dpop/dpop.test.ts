import { generateKeyPairSync } from 'node:crypto'
import { calculateJwkThumbprint, decodeProtectedHeader, EmbeddedJWK, jwtVerify } from 'jose'
import { describe, expect, it } from 'vitest'
import type { HttpAnswer, HttpRequest } from '../../contract.js'
import { dpopAlg, dpopProblems, dpopProof, flowDpop, parsePrivateKey, sendWithDpop } from './index.js'

const ec = (namedCurve: string) => generateKeyPairSync('ec', { namedCurve }).privateKey
const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey
const ed = generateKeyPairSync('ed25519').privateKey
const p256 = ec('P-256')

describe('DPoP keys', () => {
  it.each([
    ['a JWK object', p256.export({ format: 'jwk' })],
    ['JWK text', JSON.stringify(p256.export({ format: 'jwk' }))],
    ['PKCS#8 PEM', p256.export({ format: 'pem', type: 'pkcs8' }).toString()],
    ['SEC1 PEM', p256.export({ format: 'pem', type: 'sec1' }).toString()],
  ])('reads %s', (_, raw) => {
    expect(parsePrivateKey(raw)?.key.asymmetricKeyType).toBe('ec')
  })

  it('refuses a public key and text that is no key', () => {
    const pub = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'jwk' })
    expect(parsePrivateKey(pub)).toBeUndefined()
    expect(parsePrivateKey('not a key')).toBeUndefined()
  })

  it('picks the algorithm from the key type, the JWK alg, and the server list', () => {
    expect(dpopAlg(p256, undefined)).toBe('ES256')
    expect(dpopAlg(ec('P-384'), undefined)).toBe('ES384')
    expect(dpopAlg(ec('P-521'), undefined)).toBe('ES512')
    expect(dpopAlg(rsa, undefined)).toBe('RS256')
    expect(dpopAlg(rsa, undefined, ['PS256', 'ES256'])).toBe('PS256')
    expect(dpopAlg(rsa, 'PS384')).toBe('PS384')
    expect(dpopAlg(ed, undefined, ['ES256', 'Ed25519'])).toBe('Ed25519')
    expect(dpopAlg(rsa, undefined, ['ES256'])).toBeUndefined()
    expect(dpopAlg(ec('secp256k1'), undefined)).toBeUndefined()
  })
})

describe('dpopProblems', () => {
  it('names a key the server does not accept', () => {
    const problems = dpopProblems({ auth_type: 'oauth', dpop_key: rsa.export({ format: 'jwk' }) }, ['ES256', 'EdDSA'])
    expect(problems.dpop_key).toMatch(/does not accept.*ES256, EdDSA/)
  })

  it('refuses a key the broker makes when it would travel in a URL or a page, the default delivery included', () => {
    const base = { auth_type: 'oauth', dpop: 'true', callback: 'http://localhost/cb' }
    expect(dpopProblems(base).delivery).toMatch(/must be code/)
    expect(dpopProblems({ ...base, delivery: 'form_post' }).delivery).toMatch(/must be code/)
    expect(dpopProblems({ ...base, delivery: 'code' })).toEqual({})
    // Without a callback the result is a JSON answer.
    expect(dpopProblems({ auth_type: 'oauth', dpop: true })).toEqual({})
    // The app's own key never travels: any delivery.
    expect(dpopProblems({ ...base, dpop_key: p256.export({ format: 'jwk' }) })).toEqual({})
  })

  it('names a dpop value that is no boolean', () => {
    expect(dpopProblems({ auth_type: 'oauth', dpop: 'maybe' }).dpop).toBe('must be true or false')
  })
})

describe('proofs', () => {
  it('carry typ, the public jwk, htm, htu without query and fragment, iat, a fresh jti, nonce and ath', async () => {
    const { key } = (await flowDpop({ auth_type: 'oauth', dpop_key: p256.export({ format: 'jwk' }) }, {}))!
    const proof = await dpopProof(key, 'post', 'https://as.example/token?x=1#f', {
      nonce: 'n-1',
      // RFC 9449 §7.1's example token and its ath
      accessToken: 'Kz~8mXK1EalYznwH-LC-1fBAo.4Ljp~zsPE_NeO.gxU',
    })
    const header = decodeProtectedHeader(proof)
    expect(header).toMatchObject({ typ: 'dpop+jwt', alg: 'ES256' })
    expect(header.jwk).not.toHaveProperty('d')
    const { payload } = await jwtVerify(proof, EmbeddedJWK, { typ: 'dpop+jwt' })
    expect(payload).toMatchObject({ htm: 'POST', htu: 'https://as.example/token', nonce: 'n-1' })
    expect(payload.ath).toBe('fUHyO2r2Z3DZ53EsNrWBb0xWXoaNy59IiKCAqksmQEo')
    expect(typeof payload.iat).toBe('number')
    const again = await jwtVerify(await dpopProof(key, 'POST', 'https://as.example/token'), EmbeddedJWK)
    expect(again.payload.jti).not.toBe(payload.jti)
    expect(key.jkt).toBe(await calculateJwkThumbprint(header.jwk!))
  })

  it('makes an ES256 key for dpop: true and finds it again in the flow data', async () => {
    const made = await flowDpop({ auth_type: 'oauth', dpop: true }, {})
    expect(made?.made).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256' })
    expect(made?.made?.d).toBeTruthy()
    const again = await flowDpop({ auth_type: 'oauth', dpop: true }, { dpop_jwk: made!.made })
    expect(again?.key.jkt).toBe(made!.key.jkt)
  })
})

describe('sendWithDpop', () => {
  const key = async () =>
    (await flowDpop({ auth_type: 'oauth', dpop_key: ed.export({ format: 'jwk' }) }, {}, ['EdDSA']))!.key

  it('retries once with the nonce of a use_dpop_nonce refusal, and remembers it for the next request', async () => {
    const seen: Array<{ nonce?: unknown; body?: string }> = []
    let builds = 0
    const http = async (_url: string, req?: HttpRequest): Promise<HttpAnswer> => {
      const { payload } = await jwtVerify(req!.headers!.dpop!, EmbeddedJWK)
      seen.push({ nonce: payload.nonce, body: req!.body })
      if (payload.nonce !== 'n-2')
        return { status: 400, headers: { 'dpop-nonce': 'n-2' }, body: '{"error":"use_dpop_nonce"}' }
      return { status: 200, headers: {}, body: '{"access_token":"a"}' }
    }
    const build = async () => ({ method: 'POST', body: `attempt=${++builds}` })
    const k = await key()
    const first = await sendWithDpop({ http }, 'https://nonce.example/token', build, k)
    expect(first.status).toBe(200)
    expect(seen).toEqual([
      { nonce: undefined, body: 'attempt=1' },
      { nonce: 'n-2', body: 'attempt=2' },
    ])
    await sendWithDpop({ http }, 'https://nonce.example/other', build, k)
    expect(seen.at(-1)?.nonce).toBe('n-2')
  })

  it('retries only once', async () => {
    let calls = 0
    const http = async (): Promise<HttpAnswer> => {
      calls++
      return { status: 400, headers: { 'dpop-nonce': `n-${calls}` }, body: '{"error":"use_dpop_nonce"}' }
    }
    const answer = await sendWithDpop({ http }, 'https://stubborn.example/token', async () => ({}), await key())
    expect(answer.status).toBe(400)
    expect(calls).toBe(2)
  })
})
