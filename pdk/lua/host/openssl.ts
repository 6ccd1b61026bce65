/**
 * What broker's resty.openssl.digest / mac / pkey need from node:crypto: digests and HMACs of whole
 * inputs, keys read from PEM, DER or JWK text, and signatures made or checked. Failures answer
 * `[undefined, message]`, lua-resty-openssl's `nil, err`, never a thrown error: the Lua side
 * passes them on as the library does.
 */
import {
  constants,
  createHash,
  createHmac,
  createPrivateKey,
  createPublicKey,
  getHashes,
  sign,
  verify,
  type KeyObject,
} from 'node:crypto'
import { bytesOf } from './codec.js'
import type { HostOp } from './types.js'

let hashes: Set<string> | undefined

/** OpenSSL's digest name as node:crypto knows it (`SHA256` → `sha256`), or undefined. */
function hashName(alg: unknown): string | undefined {
  if (typeof alg !== 'string' && !Buffer.isBuffer(alg)) return undefined
  hashes ??= new Set(getHashes().map((h) => h.toLowerCase()))
  const name = bytesOf(alg).toString('latin1').toLowerCase()
  return hashes.has(name) ? name : undefined
}

const fail = (where: string, message: string): unknown[] => [undefined, `${where}: ${message}`]
/** A value in a message: a string quoted (cut at 40 bytes), anything else by its type alone. */
const shown = (v: unknown) =>
  typeof v === 'string' || Buffer.isBuffer(v)
    ? JSON.stringify(bytesOf(v).toString('latin1').slice(0, 40))
    : `(a ${v === undefined ? 'nil' : typeof v === 'object' ? 'table' : typeof v})`

/** A key from its text or bytes: PEM (private or public), JWK JSON, or DER (PKCS#8, SPKI, PKCS#1). */
function readKey(data: Buffer, format: string, want: string): KeyObject {
  const text = data.toString('latin1').trim()
  const privateWanted = want !== 'pu'
  const publicWanted = want !== 'pr'
  const attempts: Array<() => KeyObject> = []
  if ((format === '*' || format === 'PEM') && text.startsWith('-----BEGIN')) {
    // keys only: node:crypto would also take a certificate's public key, lua-resty-openssl's pkey does not
    const isPrivate = /^-----BEGIN (RSA |EC )?PRIVATE KEY-----/.test(text)
    const isPublic = /^-----BEGIN (RSA )?PUBLIC KEY-----/.test(text)
    if (isPrivate && privateWanted) attempts.push(() => createPrivateKey(text))
    if (isPublic && publicWanted) attempts.push(() => createPublicKey(text))
  } else if ((format === '*' || format === 'JWK') && text.startsWith('{')) {
    const jwk = JSON.parse(text) as Record<string, unknown>
    if ('d' in jwk && privateWanted) attempts.push(() => createPrivateKey({ key: jwk, format: 'jwk' }))
    if (!('d' in jwk) && publicWanted) attempts.push(() => createPublicKey({ key: jwk, format: 'jwk' }))
  } else if (format === '*' || format === 'DER') {
    if (privateWanted) {
      attempts.push(() => createPrivateKey({ key: data, format: 'der', type: 'pkcs8' }))
      attempts.push(() => createPrivateKey({ key: data, format: 'der', type: 'pkcs1' }))
      attempts.push(() => createPrivateKey({ key: data, format: 'der', type: 'sec1' }))
    }
    if (publicWanted) {
      attempts.push(() => createPublicKey({ key: data, format: 'der', type: 'spki' }))
      attempts.push(() => createPublicKey({ key: data, format: 'der', type: 'pkcs1' }))
    }
  }
  for (const attempt of attempts) {
    try {
      return attempt()
    } catch {
      // the next reading
    }
  }
  throw new Error('not a key')
}

/** The key as its DER export (PKCS#8 or SPKI): what the Lua object carries between calls. */
const keyOf = (der: unknown, isPrivate: unknown): KeyObject =>
  isPrivate
    ? createPrivateKey({ key: bytesOf(der), format: 'der', type: 'pkcs8' })
    : createPublicKey({ key: bytesOf(der), format: 'der', type: 'spki' })

/** The options node:crypto's sign/verify take for OpenSSL's padding number and `ecdsa_use_raw`. */
function signOptions(key: KeyObject, padding: unknown, raw: unknown, signing: boolean) {
  const pss = Number(padding) === constants.RSA_PKCS1_PSS_PADDING
  return {
    key,
    ...(key.asymmetricKeyType === 'rsa' && padding != null ? { padding: Number(padding) } : {}),
    ...(pss ? { saltLength: signing ? constants.RSA_PSS_SALTLEN_DIGEST : constants.RSA_PSS_SALTLEN_AUTO } : {}),
    ...(raw ? { dsaEncoding: 'ieee-p1363' as const } : {}),
  }
}

/** The digest a signature uses: the one named, else OpenSSL's default (none for EdDSA keys). */
function signDigest(key: KeyObject, md: unknown): string | null | undefined {
  if (key.asymmetricKeyType === 'ed25519' || key.asymmetricKeyType === 'ed448') return null
  return md == null ? 'sha256' : hashName(md)
}

export const OPENSSL_OPS: Record<string, HostOp> = {
  ossl_digest_known: (_s, alg) => (hashName(alg) ? [true] : fail('digest.new', `invalid digest type ${shown(alg)}`)),
  ossl_digest: (_s, alg, data) => {
    const name = hashName(alg)
    return name ? [createHash(name).update(bytesOf(data)).digest()] : fail('digest', `invalid digest ${shown(alg)}`)
  },
  ossl_hmac: (_s, alg, key, data) => {
    const name = hashName(alg)
    if (!name) return fail('mac', `invalid digest ${shown(alg)}`)
    return [createHmac(name, bytesOf(key)).update(bytesOf(data)).digest()]
  },
  /** Reads a key: its DER export, whether private, its type (rsa, ec, ed25519 …) and size in bits. */
  ossl_pkey_new: (_s, data, format, want) => {
    let key: KeyObject
    try {
      key = readKey(bytesOf(data), String(format ?? '*').toUpperCase(), String(want ?? '*'))
    } catch {
      return fail('pkey.new', 'could not read the key (PEM, DER or JWK of an RSA, EC or Ed25519 key expected)')
    }
    const isPrivate = key.type === 'private'
    const der = isPrivate ? key.export({ format: 'der', type: 'pkcs8' }) : key.export({ format: 'der', type: 'spki' })
    const d = key.asymmetricKeyDetails ?? {}
    const bits = d.modulusLength ?? { prime256v1: 256, secp384r1: 384, secp521r1: 521 }[d.namedCurve ?? ''] ?? 0
    return [der, isPrivate, key.asymmetricKeyType, bits, d.namedCurve]
  },
  ossl_pkey_sign: (_s, der, isPrivate, md, data, padding, raw) => {
    if (!isPrivate) return fail('pkey:sign', 'a private key is needed to sign')
    const key = keyOf(der, true)
    const alg = signDigest(key, md)
    if (alg === undefined) return fail('pkey:sign', `invalid digest ${shown(md)}`)
    try {
      return [sign(alg, bytesOf(data), signOptions(key, padding, raw, true))]
    } catch {
      return fail('pkey:sign', 'the key cannot sign with these options')
    }
  },
  ossl_pkey_verify: (_s, der, isPrivate, md, data, signature, padding, raw) => {
    const key = keyOf(der, isPrivate)
    const alg = signDigest(key, md)
    if (alg === undefined) return fail('pkey:verify', `invalid digest ${shown(md)}`)
    try {
      return [verify(alg, bytesOf(data), signOptions(key, padding, raw, false), bytesOf(signature))]
    } catch {
      return [false, 'pkey:verify: the signature does not fit the key and options']
    }
  },
  ossl_pkey_pem: (_s, der, isPrivate, which) => {
    const key = keyOf(der, isPrivate)
    if (which === 'private') {
      if (!isPrivate) return fail('pkey:to_PEM', 'the key is public')
      return [key.export({ format: 'pem', type: 'pkcs8' })]
    }
    const pub = isPrivate ? createPublicKey(key) : key
    return [pub.export({ format: 'pem', type: 'spki' })]
  },
}
