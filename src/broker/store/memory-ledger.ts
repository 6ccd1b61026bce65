import type { Redis } from 'ioredis'
import { brokerError } from '../../errors/index.js'

/** How often the embedded store's expired keys are deleted. */
export const SWEEP_MS = 1000

export interface Held {
  bytes: number
  /** Epoch ms; undefined while the store has not said (a key written without a lifetime). */
  expiresAt: number | undefined
}

/**
 * What the embedded store (ioredis-mock) holds, by key: its size and when it expires. The mock
 * deletes an expired key only when that key is read again, and cannot list the keys it holds once
 * expired, so without this every flow ever stored stayed in memory until the worker ran out of
 * heap (issue 27). The ledger deletes what has expired every SWEEP_MS, and refuses a new flow
 * (STORE_FULL, 503) past `maxBytes` instead of letting the process die with every flow in it.
 * A real Redis needs none of this: it expires keys itself and has its own `maxmemory`.
 */
export class MemoryLedger {
  private readonly held = new Map<string, Held>()
  private total = 0
  private readonly timer: ReturnType<typeof setInterval>
  private sweeping = false

  constructor(
    private readonly redis: Redis,
    private readonly maxBytes: number,
  ) {
    this.timer = setInterval(() => void this.sweep(), SWEEP_MS)
    this.timer.unref()
  }

  /** Bytes of keys and values held (UTF-16 code units: what a JS string of them costs, at least). */
  get bytes(): number {
    return this.total
  }

  /** Keys held, expired ones not yet swept included. */
  get size(): number {
    return this.held.size
  }

  /**
   * The one way a write to the embedded store is made: `admit` (the value a new key is about to hold)
   * refused with STORE_FULL when it would take the store past its limit; then `write`; then what `key`
   * holds afterwards, read back from the store: its size and its lifetime (a deleted key leaves the
   * ledger, a compare-and-set keeps its key's lifetime, a claim changes it).
   */
  async accounted<T>(key: string, write: () => Promise<T>, admit?: string): Promise<T> {
    if (admit !== undefined && this.total + key.length + admit.length > this.maxBytes) throw brokerError('storeFull')
    try {
      return await write()
    } finally {
      await this.measure(key)
    }
  }

  /** What the ledger holds for each key: its bytes and when it expires (for tests that compare it with the store). */
  entries(): ReadonlyMap<string, Readonly<Held>> {
    return this.held
  }

  private async measure(key: string): Promise<void> {
    const [length, ttl] = await Promise.all([this.redis.strlen(key), this.redis.pttl(key)])
    if (ttl === -2) return this.removed(key)
    const bytes = key.length + length
    const before = this.held.get(key)
    this.total += bytes - (before?.bytes ?? 0)
    this.held.set(key, { bytes, expiresAt: ttl >= 0 ? Date.now() + ttl : undefined })
  }

  private removed(key: string): void {
    const before = this.held.get(key)
    if (!before) return
    this.total -= before.bytes
    this.held.delete(key)
  }

  /** Deletes every key whose lifetime has passed; EXISTS makes the mock drop an expired key. */
  async sweep(now = Date.now()): Promise<void> {
    if (this.sweeping) return
    this.sweeping = true
    try {
      for (const [key, held] of this.held) {
        if (held.expiresAt === undefined || held.expiresAt > now) continue
        if ((await this.redis.exists(key)) === 0) this.removed(key)
        else held.expiresAt = await this.expiryOf(key)
      }
    } finally {
      this.sweeping = false
    }
  }

  /** Stops sweeping (the store is closing). */
  close(): void {
    clearInterval(this.timer)
  }

  private async expiryOf(key: string): Promise<number | undefined> {
    const ttl = await this.redis.pttl(key)
    return ttl >= 0 ? Date.now() + ttl : undefined
  }
}
