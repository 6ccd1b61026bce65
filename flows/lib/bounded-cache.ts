/**
 * A cache of at most `max` entries, each fresh for its own time to live. Nobody evicts anybody
 * else's fresh entry: when the cache is full, expired entries make room, and when none has expired
 * a new entry is not kept (its reader reads it again next time). Whoever can make the broker read
 * many keys (an api key holder storing records with 256 issuers) slows only their own reads, and
 * never flushes what other flows rely on.
 */
export class BoundedCache<T> {
  private readonly entries = new Map<string, { value: T; until: number }>()

  constructor(private readonly max: number) {}

  /** The fresh value under `key`, if any. */
  get(key: string, now = Date.now()): T | undefined {
    const hit = this.entries.get(key)
    if (!hit) return undefined
    if (hit.until > now) return hit.value
    this.entries.delete(key)
    return undefined
  }

  /** Keeps `value` under `key` for `ttlMs`; false when the cache is full of fresh entries (nothing kept). */
  set(key: string, value: T, ttlMs: number, now = Date.now()): boolean {
    if (!this.entries.has(key) && this.entries.size >= this.max) {
      for (const [k, e] of this.entries) if (e.until <= now) this.entries.delete(k)
      if (this.entries.size >= this.max) return false
    }
    this.entries.set(key, { value, until: now + ttlMs })
    return true
  }

  get size(): number {
    return this.entries.size
  }
}
