import {
  createRemoteJWKSet,
  customFetch,
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

// A JWT signed by a provider (an id_token, a signed userinfo answer) checked against the provider's
// key set at its jwks_uri, and the key sets kept per jwks_uri.

type Http = FlowContext['http']

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
