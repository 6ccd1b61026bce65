/** Header storage with the kit's name rules: case-insensitive, `_` ≡ `-`, order kept. */

/** The lookup key of a header name. */
export const headerKey = (name: string): string => name.toLowerCase().replace(/_/g, '-')

/** A headers table: lowercase names; a string, or an array when the header repeats. */
export type HeadersTable = Record<string, string | string[]>

export class HeaderList {
  private entries: Array<[string, string]> = []

  /** Builds a list from a fixture headers object (a value may be an array). */
  static from(input: Record<string, unknown> | undefined): HeaderList {
    const list = new HeaderList()
    for (const [name, value] of Object.entries(input ?? {})) {
      for (const v of Array.isArray(value) ? value : [value]) list.add(name, String(v))
    }
    return list
  }

  clone(): HeaderList {
    const copy = new HeaderList()
    copy.entries = this.entries.map(([n, v]) => [n, v])
    return copy
  }

  get size(): number {
    return this.entries.length
  }

  /** First value of the header among the first `max` entries (Kong's getters read a limited table). */
  getLimited(name: string, max: number): string | undefined {
    if (this.entries.length <= max) return this.get(name)
    const key = headerKey(name)
    for (let i = 0; i < max; i++) if (headerKey(this.entries[i]![0]) === key) return this.entries[i]![1]
    return undefined
  }

  /** First value of the header, or undefined. */
  get(name: string): string | undefined {
    const key = headerKey(name)
    for (const [n, v] of this.entries) if (headerKey(n) === key) return v
    return undefined
  }

  all(name: string): string[] {
    const key = headerKey(name)
    return this.entries.filter(([n]) => headerKey(n) === key).map(([, v]) => v)
  }

  has(name: string): boolean {
    return this.get(name) !== undefined
  }

  /** Replaces every occurrence of `name` with the given value(s), keeping the first position. */
  set(name: string, value: string | string[]): void {
    const key = headerKey(name)
    const at = this.entries.findIndex(([n]) => headerKey(n) === key)
    this.entries = this.entries.filter(([n]) => headerKey(n) !== key)
    const added = (Array.isArray(value) ? value : [value]).map((v): [string, string] => [name, v])
    this.entries.splice(at === -1 ? this.entries.length : at, 0, ...added)
  }

  /** Each header `over` holds replaces this list's of that name: its values, under the name `over` first gives it. */
  overlay(over: HeaderList): void {
    const seen = new Set<string>()
    for (const [name] of over.entries) {
      const key = headerKey(name)
      if (seen.has(key)) continue
      seen.add(key)
      this.set(name, over.all(name))
    }
  }

  add(name: string, value: string | string[]): void {
    for (const v of Array.isArray(value) ? value : [value]) this.entries.push([name, v])
  }

  clear(name: string): void {
    const key = headerKey(name)
    this.entries = this.entries.filter(([n]) => headerKey(n) !== key)
  }

  /** Number of distinct header names. */
  countNames(): number {
    return new Set(this.entries.map(([n]) => headerKey(n))).size
  }

  /**
   * The headers table of at most `max` entries (ngx counts each occurrence); `truncated`
   * says whether some were left out.
   */
  table(
    max = Infinity,
    keyOf: (name: string) => string = (n) => n.toLowerCase(),
  ): { headers: HeadersTable; truncated: boolean } {
    const headers: HeadersTable = {}
    let n = 0
    for (const [name, value] of this.entries) {
      if (n >= max) return { headers, truncated: true }
      n++
      const key = keyOf(name)
      const prev = headers[key]
      if (prev === undefined) headers[key] = value
      else if (Array.isArray(prev)) prev.push(value)
      else headers[key] = [prev, value]
    }
    return { headers, truncated: false }
  }
}
