import { decodeProtectedHeader, errors, type JWTPayload } from 'jose'
import { FlowError, type FlowContext } from '../contract.js'
import { verifySigned } from './jwks.js'

type Http = FlowContext['http']

/** Clock skew allowed on exp, iat and nbf, in seconds. */
const SKEW_SECONDS = 60
/** An id_token older than this at /callback is refused: it was minted for this very exchange. */
const MAX_AGE = '10m'

/** What the broker checks an id_token against. */
export interface IdTokenCheck {
  jwksUri: string
  /** The issuer the token must name, when the record's provider has one. */
  issuer?: string
  clientId: string
  /** The nonce sent in the authorization request, if one was. */
  nonce?: string
}

/**
 * Verifies an id_token (OpenID Connect Core §3.1.3.7): signature against the provider's JWKS,
 * `iss`, `aud` (and `azp`), `exp`/`iat` with a small skew, `nonce`. Throws a FlowError
 * `invalid_id_token` saying which check failed.
 */
export async function verifyIdToken(idToken: string, check: IdTokenCheck, http: Http): Promise<JWTPayload> {
  let payload: JWTPayload
  try {
    const typ = explicitType(idToken)
    if (typ && NOT_ID_TOKENS.has(typ))
      throw idTokenError(`its typ is ${typ}: a JWT of another kind (RFC 8725 §3.11), not an id_token`)
    payload = await verifySigned(idToken, check.jwksUri, http, {
      issuer: check.issuer,
      audience: check.clientId,
      clockTolerance: SKEW_SECONDS,
      maxTokenAge: MAX_AGE,
      requiredClaims: ['iss', 'sub', 'aud', 'exp', 'iat'],
    })
  } catch (err) {
    throw invalid(err)
  }
  const aud = Array.isArray(payload.aud) ? payload.aud : [payload.aud]
  if (aud.length > 1 || payload.azp !== undefined) {
    if (payload.azp !== check.clientId)
      throw idTokenError(`its azp "${String(payload.azp).slice(0, 100)}" is not the client_id`)
  }
  if (check.nonce !== undefined && payload.nonce !== check.nonce)
    throw idTokenError('its nonce is not the one sent in the authorization request')
  return payload
}

/**
 * JWTs that say they are something else (RFC 8725 §3.11 explicit typing): an access token (RFC 9068),
 * a logout token, a DPoP proof, a security event. OpenID Connect gives id_tokens no `typ` of their own,
 * so any other is let through; these are refused, or a provider's signed access token, which carries
 * the same iss, sub, aud and exp, would pass for the user's id_token.
 */
const NOT_ID_TOKENS = new Set(['at+jwt', 'logout+jwt', 'dpop+jwt', 'secevent+jwt', 'token-introspection+jwt'])

/** A JWS's `typ` as RFC 7515 §4.1.9 compares it (case-insensitive, `application/` optional); '' when absent. */
function explicitType(jwt: string): string {
  let typ: unknown
  try {
    typ = decodeProtectedHeader(jwt).typ
  } catch {
    return '' // not a JWS at all: jose's verification says so
  }
  return typeof typ === 'string' ? typ.toLowerCase().replace(/^application\//, '') : ''
}

const idTokenError = (why: string) =>
  new FlowError({ oauthError: 'invalid_id_token', description: `The provider's id_token was refused: ${why}` })

/** jose's verdict in the broker's words (its messages name the claim, never the token). */
function invalid(err: unknown): FlowError {
  if (err instanceof FlowError) return err
  if (err instanceof errors.JWTExpired) return idTokenError('it has expired')
  if (err instanceof errors.JWTClaimValidationFailed) return idTokenError(err.message)
  if (err instanceof errors.JWSSignatureVerificationFailed) return idTokenError('its signature does not verify')
  if (err instanceof errors.JWKSNoMatchingKey) return idTokenError("no key of the provider's JWKS matches it")
  if (err instanceof errors.JOSEAlgNotAllowed) return idTokenError('it is signed with an algorithm not allowed here')
  if (err instanceof errors.JOSEError) return idTokenError(err.message)
  return idTokenError('it is not a valid JWT')
}

/** Whether `scope` (space separated) asks for OpenID Connect. */
export const wantsOpenId = (scope: unknown): boolean =>
  Array.isArray(scope)
    ? scope.includes('openid')
    : typeof scope === 'string' && scope.split(/[\s,+]+/).includes('openid')

/**
 * Checks the id_token of a token answer as far as the broker can: verified against the
 * provider's JWKS when it knows one (true), passed on unverified when it knows none (false),
 * undefined when there is no id_token and none was asked for. Throws when verification fails.
 */
export async function checkIdToken(
  ctx: FlowContext,
  token: Readonly<Record<string, unknown>>,
  provider: { issuer?: string; jwks?: string },
  nonce?: string,
): Promise<boolean | undefined> {
  const idToken = token.id_token
  if (typeof idToken !== 'string' || !idToken) {
    // OpenID Connect Core §3.1.3.3: an openid request's token answer carries an id_token.
    if (nonce !== undefined && provider.jwks) throw idTokenError('the token answer has none')
    return undefined
  }
  if (!provider.jwks) return false
  await verifyIdToken(
    idToken,
    { jwksUri: provider.jwks, issuer: provider.issuer, clientId: String(ctx.record.client_id ?? ''), nonce },
    ctx.http,
  )
  return true
}
