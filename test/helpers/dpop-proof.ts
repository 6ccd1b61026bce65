import { createPrivateKey, createPublicKey, hash, type JsonWebKey, KeyObject } from 'node:crypto'
import { exportJWK, type JWK, SignJWT } from 'jose'

/**
 * What the tests' DPoP resource answers a GET of `${resourceUrl}/data` with `token` and a proof
 * signed by `given` (a private KeyObject or JWK), as an app holding the key would send it.
 */
export async function callResource(
  resourceUrl: string,
  token: string,
  given: KeyObject | JWK,
  alg = 'ES256',
): Promise<{ status: number; sub?: string }> {
  const key = given instanceof KeyObject ? given : createPrivateKey({ key: given as JsonWebKey, format: 'jwk' })
  const { kty, crv, x, y, n, e } = await exportJWK(createPublicKey(key))
  const jwk = Object.fromEntries(Object.entries({ kty, crv, x, y, n, e }).filter(([, v]) => v !== undefined))
  const url = `${resourceUrl}/data`
  const proof = await new SignJWT({ htm: 'GET', htu: url, ath: hash('sha256', token, 'base64url') })
    .setProtectedHeader({ alg, typ: 'dpop+jwt', jwk })
    .setIssuedAt()
    .setJti(crypto.randomUUID())
    .sign(key)
  const res = await fetch(url, { headers: { authorization: `DPoP ${token}`, dpop: proof } })
  const body = res.status === 200 ? ((await res.json()) as { sub?: string }) : {}
  return { status: res.status, sub: body.sub }
}
