import { type KeyObject, createCipheriv, createDecipheriv, createHmac, createSecretKey, hkdfSync } from 'node:crypto'
import { randomPool } from '../../../flows/lib/random.js'

/** What a capability is: each kind has its own key names and sealing keys. */
export type CapabilityKind = 'flow' | 'callback' | 'result' | 'replay' | 'events' | 'poll' | 'registration'

/** What one capability is kept under: its key's name and the AES-256-GCM key of its value. */
export interface Sealing {
  /** 192 bits of the derivation, URL-safe (32 characters): the Redis key's name. */
  readonly name: string
  readonly key: Buffer
  /** Which secret derived it (0: the first). */
  readonly generation: number
}

const IV_BYTES = 12
const TAG_BYTES = 16
const KEY_BYTES = 32
const NAME_BYTES = 24
const EXPAND_COUNTER = Buffer.from([1])

// A secret's store key comes from it through HKDF-SHA512 with its own label, so the secret's other
// use (the state → hash derivation under session.secret) never shares a key with the store.
const storeKey = (secret: string): KeyObject =>
  createSecretKey(Buffer.from(hkdfSync('sha512', Buffer.from(secret, 'utf8'), 'broker store v2', 'store key', 64)))

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
  private readonly keys: readonly KeyObject[]

  constructor(secrets: readonly string[]) {
    if (secrets.length === 0) throw new Error('Sealer needs at least one secret')
    this.keys = secrets.map(storeKey)
  }

  /** How many secrets can open a value (1 unless the keys are being rotated). */
  get generations(): number {
    return this.keys.length
  }

  /**
   * A capability's key name and sealing key under one generation's secret: HKDF-Expand(store key,
   * kind ‖ capability) with SHA-512 for one 64-byte block, which is HMAC-SHA512(key, info ‖ 0x01);
   * the first 32 bytes are the AES key, the next 24 the name. One HMAC instead of two (name, key)
   * because each crypto object costs a request about as much as the rest of its store work
   * (bench/instructions.ts); written as the Expand step because hkdfSync would run Extract again.
   */
  derive(kind: CapabilityKind, capability: string, generation = 0): Sealing {
    const block = createHmac('sha512', this.keys[generation]!)
      .update(`${kind}\0${capability}`)
      .update(EXPAND_COUNTER)
      .digest()
    const name = block.toString('base64url', KEY_BYTES, KEY_BYTES + NAME_BYTES)
    return { name, key: block.subarray(0, KEY_BYTES), generation }
  }

  /** `plaintext` sealed with a capability's key, bound to `aad` (its key's full name); URL-safe text. */
  seal(sealing: Sealing, aad: string, plaintext: string): string {
    const iv = randomPool(IV_BYTES)
    const cipher = createCipheriv('aes-256-gcm', sealing.key, iv)
    cipher.setAAD(Buffer.from(aad, 'utf8'))
    const body = cipher.update(plaintext, 'utf8')
    const final = cipher.final()
    return Buffer.concat([iv, body, final, cipher.getAuthTag()]).toString('base64url')
  }

  /** What `seal` sealed, or undefined when it does not authenticate (another key, name or tampered). */
  open(sealing: Sealing, aad: string, sealed: string): string | undefined {
    const bytes = Buffer.from(sealed, 'base64url')
    if (bytes.length < IV_BYTES + TAG_BYTES) return undefined
    const decipher = createDecipheriv('aes-256-gcm', sealing.key, bytes.subarray(0, IV_BYTES))
    decipher.setAAD(Buffer.from(aad, 'utf8'))
    decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES))
    try {
      const body = decipher.update(bytes.subarray(IV_BYTES, bytes.length - TAG_BYTES))
      return Buffer.concat([body, decipher.final()]).toString('utf8')
    } catch {
      return undefined
    }
  }
}
