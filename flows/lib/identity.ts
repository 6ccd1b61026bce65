import { decodeJwt, type JWTPayload } from 'jose'
import { FlowError, type FlowRecord } from '../contract.js'

const claimsOf = (jwt: unknown): JWTPayload | undefined => {
  if (typeof jwt !== 'string' || !jwt) return undefined
  try {
    return decodeJwt(jwt)
  } catch {
    return undefined
  }
}

/** What is wrong with a refresh record's `id_token` (the original login's), as `{field: message}`. */
export function originalIdTokenProblems(record: Readonly<FlowRecord>): Record<string, string> {
  if (record.id_token === undefined) return {}
  const claims = claimsOf(record.id_token)
  if (!claims || typeof claims.iss !== 'string' || typeof claims.sub !== 'string')
    return { id_token: 'must be the id_token of the original login: a JWT with iss and sub' }
  if (record.grant_type !== 'refresh_token') return { id_token: 'is only read with grant_type refresh_token' }
  return {}
}

/**
 * OpenID Connect Core §12.2: a refreshed id_token must be about the same user from the same issuer
 * for the same client as the original login's: same `iss` and `sub`, `aud` holding the client. The
 * broker verified its signature (without a nonce) beforehand where it knows the keys. Throws when not.
 */
export function checkSameIdentity(original: string, refreshed: unknown, clientId: string): void {
  const before = claimsOf(original)!
  const after = claimsOf(refreshed)
  if (refreshed === undefined) return
  const fail = (why: string) =>
    new FlowError({ oauthError: 'invalid_id_token', description: `The refreshed id_token was refused: ${why}` })
  if (!after) throw fail('it is not a JWT')
  if (after.iss !== before.iss)
    throw fail(
      `its iss "${String(after.iss).slice(0, 200)}" is not the original's "${String(before.iss).slice(0, 200)}"`,
    )
  if (after.sub !== before.sub) throw fail("its sub is not the original's")
  const aud = Array.isArray(after.aud) ? after.aud : [after.aud]
  if (!aud.includes(clientId)) throw fail('its aud does not hold the client_id')
}
