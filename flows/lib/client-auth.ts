import { createPrivateKey, type JsonWebKey, type KeyObject } from 'node:crypto'
import type { FlowRecord, HttpRequest } from '../contract.js'
import { randomPool } from './random.js'

// jose is loaded by the first JWT client authentication: this module is part of every broker worker
// (registration, token requests), and most clients authenticate with a secret (`npm run bench`: idle memory).
const jose = () => import('jose')

/** The client authentication methods a record may name in `client_auth` (RFC 7591 names). */
export const CLIENT_AUTH_METHODS = [
  'client_secret_post',
  'client_secret_basic',
  'client_secret_jwt',
  'private_key_jwt',
  'none',
] as const
export type ClientAuthMethod = (typeof CLIENT_AUTH_METHODS)[number]

const ALIASES: Readonly<Record<string, ClientAuthMethod>> = { post: 'client_secret_post', basic: 'client_secret_basic' }
const HMAC_ALGS = ['HS256', 'HS384', 'HS512']
const KEY_ALGS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519']
const ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer'
/** Lifetime of a client assertion: long enough for the request, short enough to be useless if replayed later. */
const ASSERTION_SECONDS = 60

/** The record's `client_auth` with aliases resolved; `client_secret_post` when unset, undefined when unknown. */
export function clientAuthMethod(record: Readonly<FlowRecord>): ClientAuthMethod | undefined {
  const v = record.client_auth
  if (v === undefined) return 'client_secret_post'
  const name = String(v)
  return (
    (Object.hasOwn(ALIASES, name) ? ALIASES[name] : undefined) ??
    ((CLIENT_AUTH_METHODS as readonly string[]).find((m) => m === name) as ClientAuthMethod | undefined)
  )
}

/** What is wrong with a record's client authentication fields, as `{field: message}`. */
export async function clientAuthProblems(record: Readonly<FlowRecord>): Promise<Record<string, string>> {
  const method = clientAuthMethod(record)
  if (!method) {
    return {
      client_auth: `must be one of ${CLIENT_AUTH_METHODS.join(', ')} (or post, basic); got "${String(record.client_auth).slice(0, 40)}"`,
    }
  }
  const problems: Record<string, string> = {}
  const alg = record.private_key_alg === undefined ? undefined : String(record.private_key_alg)
  if ((method === 'client_secret_basic' || method === 'client_secret_jwt') && record.client_secret === undefined)
    problems.client_secret = `is required when client_auth is ${method}`
  if (method === 'client_secret_jwt' && alg !== undefined && !HMAC_ALGS.includes(alg))
    problems.private_key_alg = `must be one of ${HMAC_ALGS.join(', ')} for client_secret_jwt`
  if (method === 'private_key_jwt') {
    if (record.private_key === undefined) problems.private_key = 'is required when client_auth is private_key_jwt'
    else {
      const key = signingKey(record)
      if (!key) problems.private_key = 'must be a PEM private key or a private JWK (JSON)'
      else if (!key.alg) problems.private_key_alg = 'is required: the algorithm cannot be told from this key'
      else if (!KEY_ALGS.includes(key.alg)) problems.private_key_alg = `must be one of ${KEY_ALGS.join(', ')}`
      else if (!(await signs(key.key, key.alg)))
        problems.private_key_alg = `${key.alg} does not fit this ${key.key.asymmetricKeyType ?? ''} key`
    }
  }
  return problems
}

/**
 * A request to a token or PAR endpoint: `params` plus the client's authentication as the record
 * asks, form-encoded (or JSON with `body_format: json`). `audience` is the assertion's `aud`;
 * `supported` the endpoint's methods from the issuer metadata.
 */
export async function endpointRequest(
  record: Readonly<FlowRecord>,
  params: Readonly<Record<string, string>>,
  { audience, supported }: { audience: string; supported?: readonly string[] },
): Promise<HttpRequest> {
  const method = effectiveMethod(record, supported)
  const clientId = String(record.client_id ?? '')
  const secret = record.client_secret === undefined ? undefined : String(record.client_secret)
  const headers: Record<string, string> = { accept: 'application/json, application/x-www-form-urlencoded;q=0.9' }
  const fields: Record<string, string> = { ...params }
  if (method === 'client_secret_basic' && secret !== undefined) {
    // RFC 6749 §2.3.1: form-encode both parts before base64.
    headers.authorization = `Basic ${Buffer.from(`${formEncode(clientId)}:${formEncode(secret)}`).toString('base64')}`
  } else if (method === 'client_secret_jwt' || method === 'private_key_jwt') {
    fields.client_id = clientId
    fields.client_assertion_type = ASSERTION_TYPE
    fields.client_assertion = await clientAssertion(record, method, clientId, audience)
  } else {
    fields.client_id = clientId
    if (method !== 'none' && secret !== undefined) fields.client_secret = secret
  }
  if (record.body_format === 'json') {
    headers['content-type'] = 'application/json'
    return { method: 'POST', headers, body: JSON.stringify(fields) }
  }
  headers['content-type'] = 'application/x-www-form-urlencoded'
  return { method: 'POST', headers, body: new URLSearchParams(fields).toString() }
}

/**
 * The method to use: the record's; unset, client_secret_post unless the issuer's metadata lists
 * methods without it but with client_secret_basic.
 */
function effectiveMethod(record: Readonly<FlowRecord>, supported?: readonly string[]): ClientAuthMethod {
  if (record.client_auth !== undefined) return clientAuthMethod(record) ?? 'client_secret_post'
  if (supported && !supported.includes('client_secret_post') && supported.includes('client_secret_basic'))
    return 'client_secret_basic'
  return 'client_secret_post'
}

const formEncode = (s: string) => encodeURIComponent(s).replace(/%20/g, '+')

/** An RFC 7523 client assertion: iss = sub = client_id, the given aud, a fresh jti, a short exp. */
async function clientAssertion(
  record: Readonly<FlowRecord>,
  method: 'client_secret_jwt' | 'private_key_jwt',
  clientId: string,
  audience: string,
): Promise<string> {
  let key: KeyObject | Uint8Array
  let alg: string
  let kid: string | undefined
  if (method === 'client_secret_jwt') {
    key = new TextEncoder().encode(String(record.client_secret ?? ''))
    alg = record.private_key_alg === undefined ? 'HS256' : String(record.private_key_alg)
  } else {
    const signing = signingKey(record)
    if (!signing?.alg) throw new Error('private_key is not a usable signing key')
    ;({ key, alg, kid } = signing as { key: KeyObject; alg: string; kid?: string })
  }
  const { SignJWT } = await jose()
  return new SignJWT({})
    .setProtectedHeader(kid ? { alg, kid, typ: 'JWT' } : { alg, typ: 'JWT' })
    .setIssuer(clientId)
    .setSubject(clientId)
    .setAudience(audience)
    .setJti(randomPool(24).toString('base64url'))
    .setIssuedAt()
    .setExpirationTime(`${ASSERTION_SECONDS}s`)
    .sign(key)
}

/** Whether `key` can sign with `alg` (an RS256 name on an EC key cannot): tried once at /store. */
const signs = async (key: KeyObject, alg: string): Promise<boolean> =>
  new (await jose()).SignJWT({})
    .setProtectedHeader({ alg })
    .sign(key)
    .then(
      () => true,
      () => false,
    )

/** The record's private key with its algorithm (record, JWK `alg`, else from the key type) and kid. */
function signingKey(record: Readonly<FlowRecord>): { key: KeyObject; alg?: string; kid?: string } | undefined {
  const raw = record.private_key
  let jwk: Record<string, unknown> | undefined
  let key: KeyObject
  try {
    if (typeof raw === 'object' && raw !== null) jwk = raw as Record<string, unknown>
    else if (typeof raw === 'string' && raw.trim().startsWith('{')) jwk = JSON.parse(raw) as Record<string, unknown>
    key = jwk ? createPrivateKey({ key: jwk as JsonWebKey, format: 'jwk' }) : createPrivateKey(String(raw))
  } catch {
    return undefined
  }
  if (key.type !== 'private') return undefined
  const alg =
    record.private_key_alg !== undefined
      ? String(record.private_key_alg)
      : typeof jwk?.alg === 'string'
        ? jwk.alg
        : defaultAlg(key)
  const kid =
    record.private_key_kid !== undefined
      ? String(record.private_key_kid)
      : typeof jwk?.kid === 'string'
        ? jwk.kid
        : undefined
  return { key, alg, kid }
}

function defaultAlg(key: KeyObject): string | undefined {
  switch (key.asymmetricKeyType) {
    case 'rsa':
      return 'RS256'
    case 'rsa-pss':
      return 'PS256'
    case 'ed25519':
      return 'EdDSA'
    case 'ec':
      return { prime256v1: 'ES256', secp384r1: 'ES384', secp521r1: 'ES512' }[key.asymmetricKeyDetails?.namedCurve ?? '']
    default:
      return undefined
  }
}
