/**
 * A memo of at most `max` entries that starts afresh when full. For values that are cheap to make again and
 * read far more often than made (parsed URLs, compiled patterns, split names): whoever feeds it new keys can
 * grow it by no more than `max` entries, and the cost of a flood is making values again. Entries have no
 * lifetime; for values that must stay fresh, and that nobody may evict, see flows/lib/bounded-cache.ts.
 */
export class ClearingMap<K, V> {
  private readonly entries = new Map<K, V>()

  constructor(private readonly max: number) {}

  /** The value kept under `key`, if any. */
  get(key: K): V | undefined {
    return this.entries.get(key)
  }

  /** Keeps `value` under `key`, first forgetting everything when the map is full. */
  set(key: K, value: V): void {
    if (this.entries.size >= this.max && !this.entries.has(key)) this.entries.clear()
    this.entries.set(key, value)
  }

  get size(): number {
    return this.entries.size
  }
}
