import { createPrivateKey, createPublicKey, type JsonWebKey, type KeyObject } from 'node:crypto'
import { calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK } from 'jose'
import type { FlowRecord } from '../../contract.js'
import { flag } from '../oidc/index.js'

/** A DPoP key as a flow uses it (RFC 9449): the private key, its public JWK, its algorithm and thumbprint. */
export interface DpopKey {
  readonly key: KeyObject
  readonly jwk: JWK
  readonly alg: string
  /** RFC 7638 SHA-256 thumbprint of the public key: `dpop_jkt` in the authorization request. */
  readonly jkt: string
}

// The algorithms each key type may sign a proof with, the default first (RS256 before PS256: more
// servers list it). A JWK's own `alg` goes before these.
const ALGS: Readonly<Record<string, readonly string[]>> = {
  rsa: ['RS256', 'PS256', 'RS384', 'PS384', 'RS512', 'PS512'],
  'rsa-pss': ['PS256', 'PS384', 'PS512'],
  ed25519: ['EdDSA', 'Ed25519'],
  'ec:prime256v1': ['ES256'],
  'ec:secp384r1': ['ES384'],
  'ec:secp521r1': ['ES512'],
}
const KEY_TYPES = 'EC P-256, P-384 or P-521, RSA or Ed25519'

/** Whether the record asks for DPoP: a `dpop_key`, or `dpop: true` (the broker then makes the key). */
export const wantsDpop = (record: Readonly<FlowRecord>): boolean => record.dpop_key !== undefined || flag(record.dpop)

/** Whether the broker makes the flow's key (`dpop: true` without `dpop_key`) and hands it to the app. */
export const makesDpopKey = (record: Readonly<FlowRecord>): boolean =>
  record.dpop_key === undefined && flag(record.dpop)

/** A private key from a JWK (object or JSON text) or PEM; undefined when it is none, or public. */
export function parsePrivateKey(raw: unknown): { key: KeyObject; alg?: string } | undefined {
  try {
    let jwk: Record<string, unknown> | undefined
    if (typeof raw === 'object' && raw !== null) jwk = raw as Record<string, unknown>
    else if (typeof raw === 'string' && raw.trim().startsWith('{')) jwk = JSON.parse(raw) as Record<string, unknown>
    else if (typeof raw !== 'string') return undefined
    const key = jwk ? createPrivateKey({ key: jwk as JsonWebKey, format: 'jwk' }) : createPrivateKey(raw as string)
    if (key.type !== 'private') return undefined
    return { key, alg: typeof jwk?.alg === 'string' ? jwk.alg : undefined }
  } catch {
    return undefined
  }
}

const keyKind = (key: KeyObject): string =>
  key.asymmetricKeyType === 'ec'
    ? `ec:${key.asymmetricKeyDetails?.namedCurve ?? ''}`
    : String(key.asymmetricKeyType ?? '')

/**
 * The algorithm a key signs its proofs with: the JWK's `alg`, else the key type's default; with the
 * server's `dpop_signing_alg_values_supported`, the first of those the server lists. Undefined: none fits.
 */
export function dpopAlg(key: KeyObject, jwkAlg: string | undefined, supported?: readonly string[]): string | undefined {
  const own = ALGS[keyKind(key)]
  if (!own) return undefined
  const candidates = jwkAlg ? (own.includes(jwkAlg) ? [jwkAlg] : []) : own
  return supported ? candidates.find((a) => supported.includes(a)) : candidates[0]
}

/** /store checks of the DPoP fields, as `{field: message}`; `supported` is the server's list when known. */
export function dpopProblems(record: Readonly<FlowRecord>, supported?: readonly string[]): Record<string, string> {
  const problems: Record<string, string> = {}
  if (record.dpop !== undefined && !/^(true|false|1|0|yes|no|on|off)$/i.test(String(record.dpop)))
    problems.dpop = 'must be true or false'
  if (record.dpop_key !== undefined) {
    const parsed = parsePrivateKey(record.dpop_key)
    if (!parsed) problems.dpop_key = `must be a private key (a JWK, as an object or JSON text, or PEM): ${KEY_TYPES}`
    else if (!ALGS[keyKind(parsed.key)]) problems.dpop_key = `must be an ${KEY_TYPES} key`
    else if (!dpopAlg(parsed.key, parsed.alg, supported)) {
      problems.dpop_key = supported
        ? `signs with ${parsed.alg ?? ALGS[keyKind(parsed.key)]!.join('/')}, which the server does not accept for DPoP; it accepts ${supported.join(', ')}`
        : `its alg "${parsed.alg}" does not fit this key`
    }
  } else if (makesDpopKey(record)) {
    if (supported && !supported.includes('ES256'))
      problems.dpop = `makes an ES256 key, which the server does not accept for DPoP; it accepts ${supported.join(', ')}: give a dpop_key`
    // The key made for the flow is a private key handed to the app: never in a URL or a page.
    const callback = record.callback === undefined ? 'oob' : String(record.callback)
    if (callback !== 'oob' && record.delivery !== 'code')
      problems.delivery =
        'must be code when dpop is true without a dpop_key: the private key made for the flow never travels in a URL or a page'
  }
  return problems
}

/** The key of a private JWK the broker made or the record gave, ready to sign proofs. */
async function fromPrivate(
  key: KeyObject,
  jwkAlg: string | undefined,
  supported?: readonly string[],
): Promise<DpopKey> {
  const alg = dpopAlg(key, jwkAlg, supported)
  if (!alg) throw new Error('The DPoP key signs with no algorithm the server accepts')
  const { kty, crv, n, e, x, y } = await exportJWK(createPublicKey(key))
  const jwk = Object.fromEntries(Object.entries({ kty, crv, n, e, x, y }).filter(([, v]) => v !== undefined)) as JWK
  return { key, jwk, alg, jkt: await calculateJwkThumbprint(jwk, 'sha256') }
}

/**
 * The flow's DPoP key: the record's `dpop_key`, else the one made for this flow (kept in the flow's
 * data as `dpop_jwk`), else a new ES256 key when the record says `dpop: true`; `made` is the private
 * JWK the broker made, to keep and to deliver. Undefined without DPoP.
 */
export async function flowDpop(
  record: Readonly<FlowRecord>,
  data: Readonly<Record<string, unknown>>,
  supported?: readonly string[],
): Promise<{ key: DpopKey; made?: JWK } | undefined> {
  if (record.dpop_key !== undefined) {
    const parsed = parsePrivateKey(record.dpop_key)
    if (!parsed) throw new Error('dpop_key is not a private key')
    return { key: await fromPrivate(parsed.key, parsed.alg, supported) }
  }
  if (!makesDpopKey(record)) return undefined
  let made = data.dpop_jwk as JWK | undefined
  if (!made) {
    const pair = await generateKeyPair('ES256', { extractable: true })
    made = { ...(await exportJWK(pair.privateKey)), alg: 'ES256' }
  }
  const parsed = parsePrivateKey(made)
  if (!parsed) throw new Error('The DPoP key kept with the flow does not parse')
  return { key: await fromPrivate(parsed.key, 'ES256', supported), made }
}
