import type { Redis } from 'ioredis'
import { brokerError } from '../../errors/index.js'

/** How often the embedded store's expired keys are deleted. */
export const SWEEP_MS = 1000

interface Held {
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

  /** Before a new flow is written: STORE_FULL when it would take the store past its limit. */
  admit(key: string, value: string): void {
    if (this.total + key.length + value.length > this.maxBytes) throw brokerError('storeFull')
  }

  /** After a write of `length` characters: `ttlMs` its lifetime, or undefined when the write kept the key's own (a compare-and-set). */
  wrote(key: string, length: number, ttlMs?: number): void {
    const before = this.held.get(key)
    const bytes = key.length + length
    this.total += bytes - (before?.bytes ?? 0)
    this.held.set(key, { bytes, expiresAt: ttlMs === undefined ? before?.expiresAt : Date.now() + ttlMs })
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
