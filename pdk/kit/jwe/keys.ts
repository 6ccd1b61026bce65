/** Key input for JWE: JWK (string or table), PEM or DER, RSA or EC on P-256/384/521. */
import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto'

const CURVES = new Set(['prime256v1', 'secp384r1', 'secp521r1'])

function toKeyObject(key: unknown, kind: 'private' | 'public'): KeyObject {
  const make = kind === 'private' ? createPrivateKey : createPublicKey
  if (key && typeof key === 'object' && !Buffer.isBuffer(key) && !(key instanceof Uint8Array)) {
    return make({ key: key as import('node:crypto').JsonWebKey, format: 'jwk' })
  }
  if (typeof key === 'string') {
    const text = key.trim()
    if (text.startsWith('{')) return make({ key: JSON.parse(text) as import('node:crypto').JsonWebKey, format: 'jwk' })
    if (text.includes('-----BEGIN')) return make({ key: text, format: 'pem' })
    return fromDer(Buffer.from(key, 'latin1'), kind) ?? fromDer(Buffer.from(text, 'base64'), kind) ?? fail()
  }
  if (key instanceof Uint8Array) return fromDer(Buffer.from(key), kind) ?? fail()
  throw new Error('key must be a JWK, PEM or DER')
}

function fromDer(der: Buffer, kind: 'private' | 'public'): KeyObject | undefined {
  const attempts =
    kind === 'private'
      ? [{ type: 'pkcs8' }, { type: 'pkcs1' }, { type: 'sec1' }]
      : [{ type: 'spki' }, { type: 'pkcs1' }]
  for (const a of attempts) {
    try {
      return kind === 'private'
        ? createPrivateKey({ key: der, format: 'der', type: a.type as 'pkcs8' })
        : createPublicKey({ key: der, format: 'der', type: a.type as 'spki' })
    } catch {
      // try the next encoding
    }
  }
  // a private key given where a public one is wanted still yields its public half
  if (kind === 'public') {
    const priv = fromDer(der, 'private')
    return priv ? createPublicKey(priv) : undefined
  }
  return undefined
}

const fail = (): never => {
  throw new Error('could not parse key as JWK, PEM or DER')
}

function checkType(k: KeyObject): KeyObject {
  if (k.asymmetricKeyType === 'rsa') return k
  if (k.asymmetricKeyType === 'ec' && CURVES.has(String(k.asymmetricKeyDetails?.namedCurve))) return k
  throw new Error(
    `unsupported key type: ${k.asymmetricKeyType ?? 'unknown'}${k.asymmetricKeyDetails?.namedCurve ? ` (${k.asymmetricKeyDetails.namedCurve})` : ''}`,
  )
}

/** The private key for decryption; a public key is refused with a clear message. */
export function privateKey(key: unknown): KeyObject {
  let k: KeyObject
  try {
    k = toKeyObject(key, 'private')
  } catch (e) {
    let isPublic = false
    try {
      isPublic = toKeyObject(key, 'public').type === 'public'
    } catch {
      // neither: report the original parse error
    }
    throw isPublic ? new Error('key must be a private key') : e
  }
  return checkType(k)
}

/** The public key for encryption; a private key gives its public half. */
export function publicKey(key: unknown): KeyObject {
  let k: KeyObject
  try {
    k = toKeyObject(key, 'public')
  } catch {
    k = createPublicKey(toKeyObject(key, 'private'))
  }
  return checkType(k)
}
