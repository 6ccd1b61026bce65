import { createHash, createHmac, hash as digest, timingSafeEqual } from 'node:crypto'
import { randomPool } from '../../flows/lib/random.js'

const ID_BYTES = 24

/** A session hash or one-time code: 192 bits from the CSPRNG, URL-safe (32 characters). */
export const newId = (): string => randomPool(ID_BYTES).toString('base64url')

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
// Per secret: its 32-byte key followed by room for an IV, the pad's input (filled and used synchronously).
const padInputs = new Map<string, Buffer>()
const padInput = (secret: string): Buffer => {
  let input = padInputs.get(secret)
  if (!input) {
    input = Buffer.alloc(32 + IV_BYTES)
    createHash('sha256').update(`broker state\0${secret}`).digest().copy(input)
    padInputs.set(secret, input)
  }
  return input
}

/**
 * The hash's bytes XORed with SHA-256(key ‖ iv): a one-time pad from a PRF, its own inverse.
 * Secret-prefix SHA-256 is a PRF for inputs of one fixed length (a 32-byte key and a 12-byte IV;
 * length extension needs inputs of other lengths) and costs a third of an HMAC object per call.
 */
function mask(hash: Buffer, iv: Buffer, secret: string, out: Buffer, at: number): Buffer {
  const input = padInput(secret)
  iv.copy(input, 32)
  const pad = digest('sha256', input, 'buffer')
  for (let i = 0; i < hash.length; i++) out[at + i] = hash[i]! ^ pad[i]!
  return out
}

/**
 * The broker's OAuth `state` for a flow: a fresh IV and the flow's hash encrypted under
 * session.secret. /callback finds the flow from the state alone, with nothing kept per state,
 * while the provider learns nothing. The state does not authenticate itself (one digest is cheaper
 * than AES-GCM on every /store): /callback accepts it only when it equals, byte for byte, the
 * state stored with the flow it names, so a forged or altered state names no flow that waits.
 */
export function sealState(hash: string, sessionSecret: string): string {
  const sealed = Buffer.allocUnsafe(IV_BYTES + ID_BYTES)
  const iv = randomPool(IV_BYTES)
  iv.copy(sealed)
  return mask(Buffer.from(hash, 'base64url'), iv, sessionSecret, sealed, IV_BYTES).toString('base64url')
}

/** The flow hash a `sealState` state names (not yet checked against the flow), or undefined when malformed. */
export function openState(state: string, sessionSecret: string): string | undefined {
  const sealed = Buffer.from(state, 'base64url')
  if (sealed.length !== IV_BYTES + ID_BYTES || sealed.toString('base64url') !== state) return undefined
  return mask(sealed.subarray(IV_BYTES), sealed.subarray(0, IV_BYTES), sessionSecret, Buffer.allocUnsafe(ID_BYTES), 0).toString('base64url')
}

/**
 * The name of the cookie binding a browser to one flow (several flows may run side by side). A
 * name authenticates nothing (the signed nonce in it does): it only must not show the hash, which
 * a one-way digest keyed by the secret ensures at a third of an HMAC's cost on every /start.
 */
export const flowCookieName = (hash: string, cookieSecret: string): string => `broker_${digest('sha256', `${cookieSecret}\0cookie:${hash}`, 'base64url').slice(0, 12)}`
