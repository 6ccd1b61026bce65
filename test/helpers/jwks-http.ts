import { createPublicKey, type KeyObject } from 'node:crypto'
import { SignJWT } from 'jose'
import type { HttpAnswer } from '../../flows/contract.js'

/** The public JWK of an ES256 `key` under `kid`. */
const jwkOf = (kid: string, key: KeyObject) => ({
  ...createPublicKey(key).export({ format: 'jwk' }),
  kid,
  alg: 'ES256',
})

let n = 0
/** A jwks_uri no other test of the file uses (flows/lib/jwks.ts keeps a set as long as the module lives). */
export const uniqueJwksUri = (): string => `https://op-${++n}.example/jwks`

/** A provider's JWKS endpoint as a flow's http: `keys` (by kid) read at each fetch, every fetch counted. */
export function jwksProvider(keys: Map<string, KeyObject>) {
  const fetched: string[] = []
  const http = async (url: string): Promise<HttpAnswer> => {
    fetched.push(url)
    const body = JSON.stringify({ keys: [...keys].map(([kid, k]) => jwkOf(kid, k)) })
    return { status: 200, headers: { 'content-type': 'application/json' }, body }
  }
  return { http, fetched }
}

/** A JWT for `sub: alice` and `claims`, signed ES256 by `key` under `kid`. */
export const signEs256 = (key: KeyObject, kid: string, claims: Record<string, unknown> = {}): Promise<string> =>
  new SignJWT({ sub: 'alice', ...claims }).setProtectedHeader({ alg: 'ES256', kid }).setIssuedAt().sign(key)
