/**
 * Every Redis key name the broker uses is built here. A capability (session hash, result code,
 * OAuth 1.0a request token) never appears in a name: each is named by its keyed digest (see
 * seal.ts), which sits in a `{…}` hash tag so one capability's key lands on one Cluster slot.
 */
export interface Keys {
  /** A stored flow (the layout is in flow-codec.ts), by the digest of its hash. */
  flow(name: string): string
  /** Which flow a request token seen at /callback belongs to (OAuth 1.0a), by the token's digest. */
  callback(name: string): string
  /** A one-time result for `delivery: code`, by the code's digest. */
  result(name: string): string
  /** An exchange's answer kept for the browser's request held meanwhile (its first one was dropped), by the hash's digest. */
  replay(name: string): string
  /** A device flow's poll lease (held while one instance polls, then for the interval), by the hash's digest. */
  poll(name: string): string
  /** A client the broker registered at an authorization server (RFC 7591), by the digest of issuer and redirect URI. */
  registration(name: string): string
  /** The prefix of the rate limit counters (per route and client IP). */
  rate(): string
  /** The pub/sub channel carrying flow events between workers and instances. */
  events(): string
}

/** Key builder for one deployment's prefix (several deployments may share one Redis). */
export function keys(prefix: string): Keys {
  return {
    flow: (name) => `${prefix}flow:{${name}}`,
    callback: (name) => `${prefix}cb:{${name}}`,
    result: (name) => `${prefix}result:{${name}}`,
    replay: (name) => `${prefix}replay:{${name}}`,
    poll: (name) => `${prefix}poll:{${name}}`,
    registration: (name) => `${prefix}reg:{${name}}`,
    rate: () => `${prefix}rate:`,
    events: () => `${prefix}events`,
  }
}

// Hashes, codes and callback ids the broker makes are 32 characters; a client may send anything.
// Longer than this names nothing, so it is answered as unknown without a store round trip.
const MAX_ID = 128
/** Whether `id` (a flow hash, a code, a callback id a client sent) may name anything in the store. */
export const knowable = (id: string): boolean => id.length <= MAX_ID
