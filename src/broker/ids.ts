import { type KeyObject, createHmac, createSecretKey, timingSafeEqual } from 'node:crypto'
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

/** `make(secret)`, made once per secret and kept (a process has one or two secrets). */
function perSecret<T>(make: (secret: string) => T): (secret: string) => T {
  const kept = new Map<string, T>()
  return (secret) => {
    let value = kept.get(secret)
    if (value === undefined) kept.set(secret, (value = make(secret)))
    return value
  }
}

// An HMAC keyed by a KeyObject made once per secret: keyed by the secret's text, each createHmac
// set its key up again (about 4.5 µs against 2.5 per MAC). The MAC is the same HMAC-SHA256 either way.
const macKey = perSecret((secret): KeyObject => createSecretKey(Buffer.from(secret, 'utf8')))

// An id's bytes are a multiple of 3, so the first ID_CHARS base64url characters of a digest are
// exactly its first ID_BYTES bytes.
const ID_CHARS = (ID_BYTES / 3) * 4

// Each use of a secret's key gets its own label, so a MAC of one kind never stands for another.
const STATE_LABEL = Buffer.from('broker state\0')

/** The flow hash a state's bytes stand for: HMAC-SHA256(session secret, label ‖ state), cut to an id's length. */
const hashOf = (state: Buffer, secret: string): string =>
  createHmac('sha256', macKey(secret)).update(STATE_LABEL).update(state).digest('base64url').slice(0, ID_CHARS)

/**
 * A new flow's hash and its OAuth `state`. The state is random; the hash is derived from it under
 * session.secret (an HMAC, a PRF), so /callback finds the flow from the state alone, with nothing
 * kept per state, while the provider learns nothing of the hash. A state does not
 * authenticate itself: /callback accepts it only when it equals the state stored with the flow
 * it names, so a forged state names no flow that waits.
 */
export function newFlowIds(sessionSecret: string): { hash: string; state: string } {
  const state = randomPool(ID_BYTES)
  return { hash: hashOf(state, sessionSecret), state: state.toString('base64url') }
}

/** The flow hash a `newFlowIds` state names (not yet checked against the flow), or undefined when malformed. */
export function hashOfState(state: string, sessionSecret: string): string | undefined {
  const bytes = Buffer.from(state, 'base64url')
  if (bytes.length !== ID_BYTES || bytes.toString('base64url') !== state) return undefined
  return hashOf(bytes, sessionSecret)
}
