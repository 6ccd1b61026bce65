import { type KeyObject, createCipheriv, createDecipheriv, createHmac, createSecretKey, hkdfSync } from 'node:crypto'
import { randomPool } from '../../../flows/lib/random.js'

/** What a capability is: each kind has its own key names and sealing keys. */
export type CapabilityKind = 'flow' | 'callback' | 'result' | 'events'

const IV_BYTES = 12
const TAG_BYTES = 16
/** Key names are 192 bits of an HMAC, URL-safe (32 characters). */
const NAME_CHARS = 32

interface SecretKeys {
  /** Names Redis keys: HMAC(name, kind ‖ capability). */
  readonly name: KeyObject
  /** HKDF pseudo-random key from which each capability's AES-256-GCM key is expanded. */
  readonly seal: KeyObject
}

// Both keys come from the secret through HKDF-SHA256 with their own labels, so the secret's other
// uses (the state → hash derivation under session.secret) never share a key with the store.
function secretKeys(secret: string): SecretKeys {
  const ikm = Buffer.from(secret, 'utf8')
  const derive = (label: string) => createSecretKey(Buffer.from(hkdfSync('sha256', ikm, 'broker store v1', label, 32)))
  return { name: derive('key names'), seal: derive('sealing') }
}

const message = (kind: CapabilityKind, capability: string) => `${kind}\0${capability}`

/**
 * Names and seals what the broker keeps in Redis, so that a dump (a replica, a backup, `redis-cli`)
 * hands out nothing: a key name is a keyed digest of the capability (session hash, result code,
 * request token), never the capability, and a value is AES-256-GCM under a key that needs both the
 * broker's secret and the capability. The key name is the associated data, so a sealed value moved
 * under another key does not open.
 *
 * Several secrets rotate: the first names and seals what is new; each of the others still finds
 * and opens what it sealed (its `generation`, 0 for the first) until its flows have expired.
 */
export class Sealer {
  private readonly keys: readonly SecretKeys[]

  constructor(secrets: readonly string[]) {
    if (secrets.length === 0) throw new Error('Sealer needs at least one secret')
    this.keys = secrets.map(secretKeys)
  }

  /** How many secrets can open a value (1 unless the keys are being rotated). */
  get generations(): number {
    return this.keys.length
  }

  /** The name of a capability's key under one generation's secret: HMAC-SHA256, 192 bits, URL-safe. */
  name(kind: CapabilityKind, capability: string, generation = 0): string {
    return createHmac('sha256', this.keys[generation]!.name)
      .update(message(kind, capability))
      .digest('base64url')
      .slice(0, NAME_CHARS)
  }

  /**
   * `plaintext` sealed for one capability, bound to `aad` (the key name); URL-safe text. New values
   * use the first secret; a value rewritten under an older generation's name keeps that generation.
   */
  seal(kind: CapabilityKind, capability: string, aad: string, plaintext: string, generation = 0): string {
    const iv = randomPool(IV_BYTES)
    const cipher = createCipheriv('aes-256-gcm', this.capabilityKey(generation, kind, capability), iv)
    cipher.setAAD(Buffer.from(aad, 'utf8'))
    const body = cipher.update(plaintext, 'utf8')
    const final = cipher.final()
    return Buffer.concat([iv, body, final, cipher.getAuthTag()]).toString('base64url')
  }

  /** What `seal` sealed, opened with one generation's secret; undefined when it does not authenticate. */
  open(kind: CapabilityKind, capability: string, aad: string, sealed: string, generation = 0): string | undefined {
    const bytes = Buffer.from(sealed, 'base64url')
    if (bytes.length < IV_BYTES + TAG_BYTES) return undefined
    const decipher = createDecipheriv(
      'aes-256-gcm',
      this.capabilityKey(generation, kind, capability),
      bytes.subarray(0, IV_BYTES),
    )
    decipher.setAAD(Buffer.from(aad, 'utf8'))
    decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES))
    try {
      const body = decipher.update(bytes.subarray(IV_BYTES, bytes.length - TAG_BYTES))
      return Buffer.concat([body, decipher.final()]).toString('utf8')
    } catch {
      return undefined
    }
  }

  /**
   * One capability's AES-256 key: HKDF-Expand(sealing PRK, kind ‖ capability) for one 32-byte block,
   * which is HMAC(PRK, info ‖ 0x01). Written out rather than through hkdfSync because hkdfSync
   * would also run the Extract step again and take the secret as bytes, on every request.
   */
  private capabilityKey(generation: number, kind: CapabilityKind, capability: string): Buffer {
    return createHmac('sha256', this.keys[generation]!.seal)
      .update(message(kind, capability))
      .update(EXPAND_COUNTER)
      .digest()
  }
}

const EXPAND_COUNTER = Buffer.from([1])
