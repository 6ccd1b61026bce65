import { decodeJwt, errors, type JWTPayload } from 'jose'
import { FlowError, type FlowContext } from '../contract.js'
import { type DpopKey, sendWithDpop } from './dpop/index.js'
import { verifySigned } from './jwks.js'
import type { Endpoints } from './oidc/index.js'
import { flag } from './oidc/index.js'
import { readProviderJson } from './provider-json.js'

/** Whether the record asks for the user's profile (`profile: true`). */
export const wantsProfile = (record: FlowContext['record']): boolean => flag(record.profile)

const fail = (why: string) =>
  new FlowError({ oauthError: 'invalid_request', description: `The user's profile was refused: ${why}` })

/**
 * The user's profile (OpenID Connect Core §5.3): a GET of the userinfo endpoint (or the record's
 * `profile_url`) with the access token; a DPoP-bound one (`token_type` DPoP) as RFC 9449 §7 says,
 * with a proof of the flow's `dpop` key. A signed JWT answer (`application/jwt`) must verify against
 * the provider's keys, with `iss`/`aud` checked when present (§5.3.2); with an id_token, the profile's
 * `sub` must be the id_token's. Throws a FlowError saying what failed; nothing is delivered then.
 */
export async function fetchProfile(
  ctx: Pick<FlowContext, 'record' | 'http'>,
  token: Readonly<Record<string, unknown>>,
  e: Endpoints,
  dpop?: DpopKey,
): Promise<Record<string, unknown>> {
  const accessToken = String(token.access_token)
  // The provider said how the token is bound: a DPoP token goes with a proof (whose ath is its hash),
  // a Bearer one as it is, even when the flow has a key the provider did not bind it to.
  const key = dpop && String(token.token_type).toLowerCase() === 'dpop' ? dpop : undefined
  const scheme = key ? 'DPoP' : 'Bearer'
  const answer = await sendWithDpop(
    ctx,
    e.userinfo!,
    async () => ({
      method: 'GET',
      headers: { authorization: `${scheme} ${accessToken}`, accept: 'application/json, application/jwt' },
    }),
    key,
    accessToken,
  )
  if (answer.status !== 200)
    throw new FlowError({ description: `The userinfo endpoint answered ${answer.status} instead of the profile` })
  const contentType = (answer.headers['content-type'] ?? '').toLowerCase()
  const profile = contentType.startsWith('application/jwt')
    ? await signedProfile(ctx, answer.body.trim(), e)
    : jsonProfile(answer.body)
  const idToken = token.id_token
  if (typeof idToken === 'string' && idToken) {
    let sub: unknown
    try {
      sub = decodeJwt(idToken).sub
    } catch {
      sub = undefined
    }
    // §5.3.2: the sub of the userinfo response MUST exactly match the sub of the id_token.
    if (typeof profile.sub !== 'string' || profile.sub !== sub)
      throw fail(
        `its sub "${String(profile.sub).slice(0, 100)}" is not the id_token's sub "${String(sub).slice(0, 100)}"`,
      )
  }
  return profile
}

function jsonProfile(body: string): Record<string, unknown> {
  // Bounded like every provider answer (provider-json.ts): past the bounds, a provider error.
  const parsed = readProviderJson(body, "The userinfo endpoint's answer")
  if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Record<string, unknown>
  throw new FlowError({ description: 'The userinfo endpoint answered with a body that is not a JSON object' })
}

async function signedProfile(
  ctx: Pick<FlowContext, 'record' | 'http'>,
  jwt: string,
  e: Endpoints,
): Promise<Record<string, unknown>> {
  if (!e.jwks) throw fail('it is a signed JWT, and the record names no issuer or jwks_uri to verify it with')
  let claims: JWTPayload
  try {
    claims = decodeJwt(jwt)
  } catch {
    throw fail('it is not a valid JWT (an encrypted userinfo is not supported)')
  }
  try {
    // §5.3.2: iss and aud when present; no nonce, exp or iat required.
    return await verifySigned(jwt, e.jwks, ctx.http, {
      issuer: claims.iss !== undefined ? e.issuer : undefined,
      audience: claims.aud !== undefined ? String(ctx.record.client_id ?? '') : undefined,
      clockTolerance: 60,
    })
  } catch (err) {
    if (err instanceof FlowError) throw err
    if (err instanceof errors.JWTClaimValidationFailed || err instanceof errors.JWTExpired) throw fail(err.message)
    if (err instanceof errors.JWKSNoMatchingKey) throw fail("no key of the provider's JWKS matches it")
    throw fail('its signature does not verify')
  }
}
