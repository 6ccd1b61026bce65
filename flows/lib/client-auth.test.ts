import { generateKeyPairSync } from 'node:crypto'
import { decodeJwt, decodeProtectedHeader, importJWK, jwtVerify } from 'jose'
import { describe, expect, it } from 'vitest'
import { clientAuthMethod, clientAuthProblems, endpointRequest } from './client-auth.js'

const base = { auth_type: 'oauth', client_id: 'app', client_secret: 's3cret' }
const form = (body: string | undefined) => Object.fromEntries(new URLSearchParams(body))

describe('client_auth', () => {
  it('defaults to client_secret_post and resolves the aliases', () => {
    expect(clientAuthMethod(base)).toBe('client_secret_post')
    expect(clientAuthMethod({ ...base, client_auth: 'post' })).toBe('client_secret_post')
    expect(clientAuthMethod({ ...base, client_auth: 'basic' })).toBe('client_secret_basic')
    expect(clientAuthMethod({ ...base, client_auth: 'tls_client_auth' })).toBeUndefined()
  })

  it.each(['constructor', 'toString', '__proto__', 'valueOf'])(
    'refuses client_auth %s, an Object built-in',
    async (v) => {
      expect(clientAuthMethod({ ...base, client_auth: v })).toBeUndefined()
      expect(await clientAuthProblems({ ...base, client_auth: v })).toHaveProperty('client_auth')
    },
  )

  it('names the field for an unknown method, a missing secret or key, a bad algorithm', async () => {
    expect(Object.keys(await clientAuthProblems({ ...base, client_auth: 'nonsense' }))).toEqual(['client_auth'])
    expect(await clientAuthProblems({ auth_type: 'oauth', client_id: 'a', client_auth: 'basic' })).toEqual({
      client_secret: 'is required when client_auth is client_secret_basic',
    })
    expect(
      await clientAuthProblems({ ...base, client_auth: 'client_secret_jwt', private_key_alg: 'RS256' }),
    ).toHaveProperty('private_key_alg')
    const pem = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'pem', type: 'pkcs8' })
    expect(await clientAuthProblems({ ...base, client_auth: 'private_key_jwt', private_key: String(pem) })).toEqual({})
    expect(
      await clientAuthProblems({
        ...base,
        client_auth: 'private_key_jwt',
        private_key: String(pem),
        private_key_alg: 'HS256',
      }),
    ).toHaveProperty('private_key_alg')
    expect(
      await clientAuthProblems({
        ...base,
        client_auth: 'private_key_jwt',
        private_key: String(pem),
        private_key_alg: 'RS256',
      }),
    ).toEqual({ private_key_alg: 'RS256 does not fit this ec key' })
  })

  it('sends body credentials, Basic (form-encoded parts), or only the client_id', async () => {
    const post = await endpointRequest(base, { grant_type: 'x' }, { audience: 'https://as' })
    expect(form(post.body)).toEqual({ grant_type: 'x', client_id: 'app', client_secret: 's3cret' })
    const basic = await endpointRequest(
      { ...base, client_id: 'a b', client_secret: 'p:w', client_auth: 'basic' },
      { grant_type: 'x' },
      { audience: 'https://as' },
    )
    expect(basic.headers!.authorization).toBe(`Basic ${Buffer.from('a+b:p%3Aw').toString('base64')}`)
    expect(form(basic.body)).toEqual({ grant_type: 'x' })
    const none = await endpointRequest({ ...base, client_auth: 'none' }, {}, { audience: 'https://as' })
    expect(form(none.body)).toEqual({ client_id: 'app' })
  })

  it('falls back to Basic when the metadata lists it but not post, unless the record says', async () => {
    const supported = ['client_secret_basic', 'private_key_jwt']
    expect((await endpointRequest(base, {}, { audience: 'a', supported })).headers!.authorization).toMatch(/^Basic /)
    const explicit = await endpointRequest({ ...base, client_auth: 'post' }, {}, { audience: 'a', supported })
    expect(explicit.headers!.authorization).toBeUndefined()
  })

  it('signs a private_key_jwt assertion with the JWK, its kid and the default alg of the key', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
    const jwk = { ...privateKey.export({ format: 'jwk' }), kid: 'key-1' }
    const req = await endpointRequest(
      { ...base, client_auth: 'private_key_jwt', private_key: jwk, body_format: 'json' },
      { grant_type: 'client_credentials' },
      { audience: 'https://as.example' },
    )
    expect(req.headers!['content-type']).toBe('application/json')
    const body = JSON.parse(req.body!) as Record<string, string>
    expect(body.client_secret).toBeUndefined()
    expect(decodeProtectedHeader(body.client_assertion!)).toMatchObject({ alg: 'RS256', kid: 'key-1' })
    const key = await importJWK(publicKey.export({ format: 'jwk' }), 'RS256')
    const { payload } = await jwtVerify(body.client_assertion!, key, { audience: 'https://as.example', issuer: 'app' })
    expect(payload.sub).toBe('app')
    // A fresh jti every time.
    const again = await endpointRequest(
      { ...base, client_auth: 'private_key_jwt', private_key: jwk },
      {},
      {
        audience: 'https://as.example',
      },
    )
    expect(decodeJwt(form(again.body).client_assertion!).jti).not.toBe(payload.jti)
  })
})
