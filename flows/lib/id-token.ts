import {
  createRemoteJWKSet,
  customFetch,
  decodeProtectedHeader,
  errors,
  type JSONWebKeySet,
  jwksCache,
  type JWKSCacheInput,
  jwtVerify,
  type JWTPayload,
  type JWTVerifyOptions,
} from 'jose'
import { FlowError, type FlowContext } from '../contract.js'
import { BoundedCache } from './bounded-cache.js'
import { readProviderJson } from './provider-json.js'

type Http = FlowContext['http']

/** Clock skew allowed on exp, iat and nbf, in seconds. */
const SKEW_SECONDS = 60
/** An id_token older than this at /callback is refused: it was minted for this very exchange. */
const MAX_AGE = '10m'
/** Asymmetric JWS algorithms only: a JWKS holds public keys, and `none` or HMAC has no place here. */
const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519']

// A provider's keys change rarely, and every OpenID flow of an issuer reads them at /callback:
// kept per jwks_uri for JWKS_TTL_MS (refetched at once on an unknown kid, at most every
// REFETCH_MS), at most MAX_SETS of them, none evicted by another (bounded-cache.ts). jose's remote
// key set does the keeping and the refetching; what it keeps is jose's exported cache entry
// ({uat, jwks}), held here per jwks_uri, so that each verification makes its own remote set whose
// fetch goes through the http of the flow that needs the keys (its deadline, the outbound policy).
const JWKS_TTL_MS = 10 * 60_000
const REFETCH_MS = 1_000
const MAX_SETS = 256
const keySets = new BoundedCache<JWKSCacheInput>(MAX_SETS)

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
 * A JWT's payload once its signature verifies against the provider's JWKS at `jwksUri` (asymmetric
 * algorithms only) and its claims pass `options`; jose's error otherwise. A `kid` the kept set does
 * not hold refetches the set once (a key rotation), at most every REFETCH_MS per jwks_uri.
 */
export async function verifySigned(
  jwt: string,
  jwksUri: string,
  http: Http,
  options: JWTVerifyOptions,
): Promise<JWTPayload> {
  let url: URL
  try {
    url = new URL(jwksUri)
  } catch {
    throw new FlowError({ description: `The provider's jwks_uri ${jwksUri.slice(0, 200)} is not a URL` })
  }
  // Kept only once a fetch has filled it: a jwks_uri that never answers takes no room.
  const cache: JWKSCacheInput = keySets.get(jwksUri) ?? {}
  const before = 'uat' in cache ? cache.uat : undefined
  const keys = createRemoteJWKSet(url, {
    cacheMaxAge: JWKS_TTL_MS,
    cooldownDuration: REFETCH_MS,
    [jwksCache]: cache,
    [customFetch]: (href) => fetchKeySet(href, http),
  })
  const all = { ...options, algorithms: ALGORITHMS }
  try {
    return (await jwtVerify(jwt, keys, all)).payload
  } catch (err) {
    // No kid, and several keys of the token's type and algorithm: each candidate in turn. A key whose
    // signature verifies decides (its claims pass or fail); none verifying is a bad signature.
    if (!(err instanceof errors.JWKSMultipleMatchingKeys)) throw err
    for await (const key of err) {
      try {
        return (await jwtVerify(jwt, key, all)).payload
      } catch (failed) {
        if (!(failed instanceof errors.JWSSignatureVerificationFailed)) throw failed
      }
    }
    throw new errors.JWSSignatureVerificationFailed()
  } finally {
    // jose wrote the new set and its time into `cache`: kept as long as the set is fresh.
    if ('uat' in cache && cache.uat !== before) keySets.set(jwksUri, cache, JWKS_TTL_MS, cache.uat)
  }
}

/**
 * jose's fetch of a key set, made by the flow's `http` (the broker's outbound policy: providers.allow,
 * the address guard, its timeout and size cap; jose's own timeout signal is not needed). An answer
 * that is not a key set is the provider's error, named as the broker names it; jose never sees it.
 */
async function fetchKeySet(uri: string, http: Http): Promise<Response> {
  const answer = await http(uri, { headers: { accept: 'application/json, application/jwk-set+json' } })
  const keys = answer.status === 200 ? readProviderJson(answer.body, `The provider's JWKS at ${uri}`) : undefined
  if (!keys || typeof keys !== 'object' || !Array.isArray((keys as JSONWebKeySet).keys)) {
    throw new FlowError({ description: `The provider's JWKS at ${uri} answered ${answer.status} without a key set` })
  }
  return new Response(answer.body, { status: 200, headers: { 'content-type': 'application/json' } })
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
