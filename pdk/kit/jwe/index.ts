/** pdk.enterprise_edition.jwe: decode, encrypt and decrypt compact JWE tokens (with jose). */
import type { JWK } from 'jose'
import { randomBytes, type KeyObject } from 'node:crypto'
import { values, type Values } from '../private/values.js'
import { privateKey, publicKey } from './keys.js'

const ALGS = ['RSA-OAEP', 'ECDH-ES']
const ENCS = ['A256GCM']

const b64 = (s: string): Buffer => {
  if (!/^[A-Za-z0-9_-]*$/.test(s)) throw new Error('invalid base64url')
  return Buffer.from(s, 'base64url')
}

// jose is imported on the first encrypt or decrypt: most fixtures never call them (~120 ms of start-up).
const jose = () => import('jose')
const joseKey = async (k: KeyObject, alg: string) => (await jose()).importJWK(k.export({ format: 'jwk' }) as JWK, alg)

/** Parses a token into its five parts, as they appear and decoded. */
export function decode(token: unknown): Record<string, unknown> | Values {
  if (typeof token !== 'string') return values(undefined, 'token must be a string')
  const parts = token.split('.')
  if (parts.length !== 5) return values(undefined, `invalid JWE token: expected 5 parts, got ${parts.length}`)
  try {
    const header = JSON.parse(b64(parts[0]!).toString('utf8')) as unknown
    if (typeof header !== 'object' || header === null) throw new Error('protected header is not a JSON object')
    const [, key, iv, ciphertext, tag] = parts.map((p) => b64(p).toString('latin1'))
    return {
      1: parts[0],
      2: parts[1],
      3: parts[2],
      4: parts[3],
      5: parts[4],
      protected: header,
      encrypted_key: key,
      iv,
      ciphertext,
      tag,
      aad: parts[0],
    }
  } catch (e) {
    return values(undefined, `failed to decode JWE token: ${(e as Error).message}`)
  }
}

/** Decrypts a token with a private key (RSA or EC); zip DEF is inflated. */
export async function decrypt(key: unknown, token: unknown): Promise<string | Values> {
  if (typeof token !== 'string') return values(undefined, 'token must be a string')
  const decoded = decode(token)
  if (!('protected' in decoded)) return decoded as Values
  const { alg, enc } = decoded.protected as { alg?: string; enc?: string }
  if (!alg || !ALGS.includes(alg)) return values(undefined, `unsupported alg: ${String(alg)}`)
  if (!enc || !ENCS.includes(enc)) return values(undefined, `unsupported enc: ${String(enc)}`)
  try {
    const k = await joseKey(privateKey(key), alg)
    const { compactDecrypt } = await jose()
    const { plaintext } = await compactDecrypt(token, k, {
      keyManagementAlgorithms: ALGS,
      contentEncryptionAlgorithms: ENCS,
    })
    return Buffer.from(plaintext).toString('utf8')
  } catch (e) {
    return values(undefined, `failed to decrypt JWE token: ${(e as Error).message}`)
  }
}

export interface EncryptOptions {
  zip?: string
  apu?: string | boolean
  apv?: string | boolean
}

/** Encrypts plaintext for a public key: alg RSA-OAEP or ECDH-ES, enc A256GCM. */
export async function encrypt(
  alg: unknown,
  enc: unknown,
  key: unknown,
  plaintext: unknown,
  options?: EncryptOptions | null,
): Promise<string | Values> {
  if (typeof alg !== 'string' || !ALGS.includes(alg)) return values(undefined, `unsupported alg: ${String(alg)}`)
  if (typeof enc !== 'string' || !ENCS.includes(enc)) return values(undefined, `unsupported enc: ${String(enc)}`)
  if (typeof plaintext !== 'string') return values(undefined, 'plaintext must be a string')
  const opts = options ?? {}
  if (opts.zip !== undefined && opts.zip !== null && opts.zip !== 'DEF')
    return values(undefined, `unsupported zip: ${String(opts.zip)}`)
  try {
    const k = await joseKey(publicKey(key), alg)
    const header: { alg: string; enc: string; zip?: string } = { alg, enc }
    if (opts.zip === 'DEF') header.zip = 'DEF'
    const { CompactEncrypt } = await jose()
    const jwe = new CompactEncrypt(Buffer.from(plaintext, 'utf8')).setProtectedHeader(header)
    if (alg === 'ECDH-ES') {
      const param = (v: string | boolean | undefined) =>
        v === false ? undefined : typeof v === 'string' ? Buffer.from(v, 'utf8') : new Uint8Array(randomBytes(16))
      const apu = param(opts.apu)
      const apv = param(opts.apv)
      if (apu || apv) jwe.setKeyManagementParameters({ ...(apu && { apu }), ...(apv && { apv }) })
    }
    return await jwe.encrypt(k)
  } catch (e) {
    return values(undefined, `failed to encrypt: ${(e as Error).message}`)
  }
}

/** Builds pdk.enterprise_edition.jwe. */
export function createJwe() {
  return { decode, decrypt, encrypt }
}
