/**
 * Symmetric ciphers and key derivation on node:crypto, for broker's resty.openssl.cipher, resty.openssl.kdf
 * and resty.aes: whole inputs (the Lua side gathers `update` parts), `[undefined, err]` for what OpenSSL
 * refuses, never a thrown error.
 */
import {
  createCipheriv,
  createDecipheriv,
  createHash,
  createHmac,
  getCipherInfo,
  hkdfSync,
  pbkdf2Sync,
  scryptSync,
} from 'node:crypto'
import { bytesOf } from './codec.js'
import type { HostOp } from './types.js'

const bytes = (v: unknown): Buffer => (v === undefined || v === null ? Buffer.alloc(0) : bytesOf(v))
const AEAD = new Set(['gcm', 'ccm', 'ocb'])

/** What a Cipher and a Decipher of any mode answer (the AEAD methods on AEAD modes only). */
interface AnyCipher {
  update(data: Buffer): Buffer
  final(): Buffer
  setAutoPadding(on: boolean): unknown
  setAAD(aad: Buffer): unknown
  setAuthTag(tag: Buffer): unknown
  getAuthTag(): Buffer
}

/** OpenSSL's name as node:crypto knows it: [name, key length, iv length, block size, mode], or undefined. */
function info(name: unknown): [string, number, number, number, string] | undefined {
  if (typeof name !== 'string' && !Buffer.isBuffer(name)) return undefined
  const n = bytesOf(name).toString('latin1').toLowerCase()
  const i = getCipherInfo(n)
  return i ? [n, i.keyLength, i.ivLength ?? 0, i.blockSize ?? 1, i.mode] : undefined
}

/** OpenSSL's EVP_BytesToKey: key and iv from a passphrase, as resty.aes and cipher:derive make them. */
function bytesToKey(md: string, pass: Buffer, salt: Buffer, rounds: number, keyLen: number, ivLen: number): Buffer[] {
  const out: Buffer[] = []
  let prev = Buffer.alloc(0)
  let total = 0
  while (total < keyLen + ivLen) {
    let d = createHash(md).update(prev).update(pass).update(salt).digest()
    for (let i = 1; i < rounds; i++) d = createHash(md).update(d).digest()
    out.push(d)
    total += d.length
    prev = d
  }
  const all = Buffer.concat(out)
  return [all.subarray(0, keyLen), all.subarray(keyLen, keyLen + ivLen)]
}

/** HKDF's extract (HMAC of the key under the salt) and expand steps, each usable alone as OpenSSL's modes allow. */
function hkdf(md: string, key: Buffer, salt: Buffer, info: Buffer, outlen: number, mode: number): Buffer {
  if (mode === 0) return Buffer.from(hkdfSync(md, key, salt, info, outlen))
  const prk =
    mode === 1
      ? createHmac(md, salt.length ? salt : Buffer.alloc(0))
          .update(key)
          .digest()
      : key
  if (mode === 1) return prk
  const blocks: Buffer[] = []
  let t = Buffer.alloc(0)
  for (let i = 1; Buffer.concat(blocks).length < outlen; i++) {
    t = createHmac(md, prk)
      .update(Buffer.concat([t, info, Buffer.from([i])]))
      .digest()
    blocks.push(t)
  }
  return Buffer.concat(blocks).subarray(0, outlen)
}

const opt = (o: Record<string, unknown>, k: string) => o[k]
const num = (o: Record<string, unknown>, k: string, d?: number) => (o[k] === undefined ? d : Number(o[k]))

export const CIPHER_OPS: Record<string, HostOp> = {
  /** name → key length, iv length, block size, mode, or nil, err. */
  cipher_info: (_s, name) => {
    const i = info(name)
    if (!i) return [undefined, `invalid cipher type "${String(name)}"`]
    return i.slice(1)
  },
  /**
   * name, encrypt, key, iv, data, no_padding, aad, tag (decrypt) → output, tag (AEAD encrypt), or nil, err.
   */
  cipher_run: (_s, name, encrypt, key, iv, data, noPadding, aad, tag, ivLength) => {
    const i = info(name)
    if (!i) return [undefined, `invalid cipher type "${String(name)}"`]
    const [n, keyLen, ivLen, , mode] = i
    const k = bytes(key)
    if (k.length !== keyLen) return [undefined, `incorrect key size, expect ${keyLen}`]
    let v = bytes(iv)
    const wantIv = typeof ivLength === 'number' ? ivLength : ivLen
    if (!AEAD.has(mode) && v.length !== ivLen) return [undefined, `incorrect iv size, expect ${ivLen}`]
    if (AEAD.has(mode) && v.length < wantIv) v = Buffer.concat([v, Buffer.alloc(wantIv - v.length)])
    try {
      const make = (encrypt ? createCipheriv : createDecipheriv) as unknown as (
        name: string,
        key: Buffer,
        iv: Buffer | null,
        options?: { authTagLength: number },
      ) => AnyCipher
      const c = make(n, k, ivLen === 0 ? null : v, AEAD.has(mode) ? { authTagLength: 16 } : undefined)
      if (noPadding === true) c.setAutoPadding(false)
      if (AEAD.has(mode) && aad !== undefined && aad !== null) c.setAAD(bytes(aad))
      if (!encrypt && AEAD.has(mode) && tag !== undefined && tag !== null) c.setAuthTag(bytes(tag))
      const out = Buffer.concat([c.update(bytes(data)), c.final()])
      if (encrypt && AEAD.has(mode)) return [out, c.getAuthTag()]
      return [out]
    } catch (e) {
      return [undefined, (e as Error).message]
    }
  },
  /** EVP_BytesToKey: md, pass, salt, rounds, key length, iv length → key, iv. */
  bytes_to_key: (_s, md, pass, salt, rounds, keyLen, ivLen) => {
    try {
      return bytesToKey(String(md), bytes(pass), bytes(salt), Number(rounds) || 1, Number(keyLen), Number(ivLen))
    } catch (e) {
      return [undefined, undefined, (e as Error).message]
    }
  },
  /** kdf: "PBKDF2", "HKDF" or "SCRYPT" and the options (the library's names) → key, or nil, err. */
  kdf: (_s, type, options) => {
    const o = (options ?? {}) as Record<string, unknown>
    const outlen = num(o, 'outlen')!
    const md = String(opt(o, 'md') ?? 'sha1').toLowerCase()
    try {
      switch (type) {
        case 'PBKDF2':
          return [pbkdf2Sync(bytes(o.pass), bytes(o.salt), Math.max(1, num(o, 'pbkdf2_iter', 1)!), outlen, md)]
        case 'HKDF':
          if (o.hkdf_key === undefined) return [undefined, 'kdf.derive: hkdf_key is required']
          return [hkdf(md, bytes(o.hkdf_key), bytes(o.salt), bytes(o.hkdf_info), outlen, num(o, 'hkdf_mode', 0)!)]
        case 'SCRYPT':
          return [
            scryptSync(bytes(o.pass), bytes(o.salt), outlen, {
              N: num(o, 'scrypt_N'),
              r: num(o, 'scrypt_r'),
              p: num(o, 'scrypt_p'),
              maxmem: num(o, 'scrypt_maxmem', 32 * 1024 * 1024)! * 4,
            }),
          ]
      }
      return [undefined, `kdf.derive: ${String(type)} is not emulated by broker (PBKDF2, HKDF and scrypt are)`]
    } catch (e) {
      return [undefined, `kdf.derive: ${(e as Error).message}`]
    }
  },
}
