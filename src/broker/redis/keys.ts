/**
 * Every Redis key name the broker uses is built here. The hash sits in a `{…}` hash tag so the
 * keys of one flow land on the same Redis Cluster slot.
 */
export interface Keys {
  /** A stored flow: one string, progress first (the format is in flows.ts). */
  flow(hash: string): string
  /** Maps a correlation id seen at /callback (OAuth 2 state, OAuth 1.0a request token) to its flow hash. */
  callback(id: string): string
  /** A one-time result code for `delivery: code`. */
  result(code: string): string
  /** The prefix of the rate limit counters (per route and client IP). */
  rate(): string
  /** The pattern matching every flow key, for listing. */
  flowPattern(): string
  /** The pub/sub channel carrying flow events between workers and instances. */
  events(): string
}

/** Key builder for one deployment's prefix (several deployments may share one Redis). */
export function keys(prefix: string): Keys {
  return {
    flow: (hash) => `${prefix}flow:{${hash}}`,
    callback: (id) => `${prefix}cb:{${id}}`,
    result: (code) => `${prefix}result:{${code}}`,
    rate: () => `${prefix}rate:`,
    flowPattern: () => `${prefix}flow:*`,
    events: () => `${prefix}events`,
  }
}
