import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'

const ID_BYTES = 24
// CSPRNG bytes fetched 256 ids at a time: one randomBytes call per id was a syscall per request.
// Each byte is handed out once (what Node's own randomUUID cache does).
const POOL_BYTES = ID_BYTES * 256
let pool = Buffer.alloc(0)
let offset = 0

/** A session hash or one-time code: 192 bits from the CSPRNG, URL-safe (32 characters). */
export function newId(): string {
  if (offset + ID_BYTES > pool.length) {
    pool = randomBytes(POOL_BYTES)
    offset = 0
  }
  const id = pool.toString('base64url', offset, offset + ID_BYTES)
  offset += ID_BYTES
  return id
}

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

/** The broker's OAuth `state` for a new flow: random and signed with session.secret. */
export const newState = (sessionSecret: string): string => sign(newId(), sessionSecret)

/** The name of the cookie binding a browser to one flow (several flows may run side by side). */
export const flowCookieName = (hash: string, cookieSecret: string): string => `broker_${mac(cookieSecret, `cookie:${hash}`).slice(0, 12)}`
