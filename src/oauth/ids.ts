import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto'

const ID_BYTES = 24
// CSPRNG bytes fetched 256 ids at a time: one randomBytes call per id was a syscall per request.
// Each byte is handed out once (what Node's own randomUUID cache does).
const POOL_BYTES = ID_BYTES * 256
let pool = Buffer.alloc(0)
let offset = 0

/** `n` fresh CSPRNG bytes (n ≤ ID_BYTES), from the pool. */
function poolBytes(n: number): Buffer {
  if (offset + n > pool.length) {
    pool = randomBytes(POOL_BYTES)
    offset = 0
  }
  const bytes = pool.subarray(offset, offset + n)
  offset += n
  return bytes
}

/** A session hash or one-time code: 192 bits from the CSPRNG, URL-safe (32 characters). */
export const newId = (): string => poolBytes(ID_BYTES).toString('base64url')

/** Compares two strings in constant time for their length (hashes, codes, nonces, MACs). */
export function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && timingSafeEqual(x, y)
}

const mac = (secret: string, value: string) => createHmac('sha256', secret).update(value).digest('base64url').slice(0, 32)

/** `value.mac`: lets the broker refuse a forged state or cookie before it touches the store. */
export const sign = (value: string, secret: string): string => `${value}.${mac(secret, value)}`

/** The value of a `sign`ed string, or undefined when the MAC does not match. */
export function unsign(signed: string, secret: string): string | undefined {
  const dot = signed.lastIndexOf('.')
  if (dot <= 0) return undefined
  const value = signed.slice(0, dot)
  return safeEqual(signed.slice(dot + 1), mac(secret, value)) ? value : undefined
}

const IV_BYTES = 12
const TAG_BYTES = 16
const stateKeys = new Map<string, Buffer>()
const stateKey = (secret: string): Buffer => {
  let key = stateKeys.get(secret)
  if (!key) stateKeys.set(secret, (key = createHash('sha256').update(`broker state\0${secret}`).digest()))
  return key
}

/**
 * The broker's OAuth `state` for a flow: its hash sealed with session.secret (AES-256-GCM, a fresh
 * IV each time). /callback finds the flow from the state alone, with no lookup and nothing kept per
 * state, while the provider learns nothing and no one can forge one.
 */
export function sealState(hash: string, sessionSecret: string): string {
  const iv = poolBytes(IV_BYTES)
  const cipher = createCipheriv('aes-256-gcm', stateKey(sessionSecret), iv)
  const sealed = Buffer.concat([iv, cipher.update(hash, 'utf8'), cipher.final(), cipher.getAuthTag()])
  return sealed.toString('base64url')
}

/** The flow hash a `sealState` state carries, or undefined when it was not sealed with this secret. */
export function openState(state: string, sessionSecret: string): string | undefined {
  const sealed = Buffer.from(state, 'base64url')
  if (sealed.length <= IV_BYTES + TAG_BYTES || sealed.length > 512 || sealed.toString('base64url') !== state) return undefined
  try {
    const decipher = createDecipheriv('aes-256-gcm', stateKey(sessionSecret), sealed.subarray(0, IV_BYTES))
    decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES))
    return Buffer.concat([decipher.update(sealed.subarray(IV_BYTES, sealed.length - TAG_BYTES)), decipher.final()]).toString('utf8')
  } catch {
    return undefined
  }
}

/** The name of the cookie binding a browser to one flow (several flows may run side by side). */
export const flowCookieName = (hash: string, cookieSecret: string): string => `broker_${mac(cookieSecret, `cookie:${hash}`).slice(0, 12)}`
