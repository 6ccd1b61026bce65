import { type KeyObject } from 'node:crypto'
import { SignJWT } from 'jose'
import { describe, expect, it } from 'vitest'
import { ecKey as ec } from '../../test/helpers/hand-made-oidc.js'
import {
  jwksProvider as provider,
  signEs256 as sign,
  uniqueJwksUri as uniqueUri,
} from '../../test/helpers/jwks-http.js'
import { FlowError, type HttpAnswer } from '../contract.js'
import { verifyIdToken } from './id-token.js'

// What verifyIdToken adds to a verified signature (jwks.test.ts): the failure it is told, and the
// JWTs of another kind it refuses.

describe('the failures of an id_token check', () => {
  it("ends with the outbound policy's own error when it refuses the jwks_uri", async () => {
    const refused = new FlowError({ brokerCode: 'PROVIDER_NOT_ALLOWED', description: 'not in providers.allow' })
    const http = async (): Promise<HttpAnswer> => {
      throw refused
    }
    const k1 = ec()
    const check = { jwksUri: uniqueUri(), clientId: 'app' }
    await expect(verifyIdToken(await sign(k1, 'k1', { aud: 'app', iss: 'x', exp: 9e9 }), check, http)).rejects.toBe(
      refused,
    )
  })
})

describe('explicit typing (RFC 8725 §3.11)', () => {
  const claims = { aud: 'app', iss: 'https://op.example', exp: Math.floor(Date.now() / 1000) + 300 }
  const signTyped = (key: KeyObject, typ: string | undefined) =>
    new SignJWT({ sub: 'alice', ...claims })
      .setProtectedHeader({ alg: 'ES256', kid: 'k1', ...(typ ? { typ } : {}) })
      .setIssuedAt()
      .sign(key)

  it("refuses the provider's signed access token (typ at+jwt, RFC 9068) offered as an id_token", async () => {
    const k1 = ec()
    const op = provider(new Map([['k1', k1]]))
    const check = { jwksUri: uniqueUri(), issuer: claims.iss, clientId: 'app' }
    for (const typ of ['at+jwt', 'application/at+jwt', 'AT+JWT', 'logout+jwt']) {
      await expect(verifyIdToken(await signTyped(k1, typ), check, op.http)).rejects.toThrow(/typ is .*not an id_token/)
    }
  })

  it('accepts an id_token with no typ or typ JWT', async () => {
    const k1 = ec()
    const op = provider(new Map([['k1', k1]]))
    const check = { jwksUri: uniqueUri(), issuer: claims.iss, clientId: 'app' }
    for (const typ of [undefined, 'JWT']) {
      expect((await verifyIdToken(await signTyped(k1, typ), check, op.http)).sub).toBe('alice')
    }
  })
})
