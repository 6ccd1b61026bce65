/**
 * How the bench's baselines keep a value in Redis: bare (in clear, under its capability) or sealed
 * as issue 14 asks of the broker, with the broker's own Sealer (src/broker/store/seal.ts).
 */
import { Sealer } from '../src/broker/store/seal.js'

/** How a value is kept: in clear under its capability (bare), or sealed under its digest (floor). */
export interface Keeping {
  /** The Redis key of a capability of a kind, and the text to write there. */
  put(kind: 'flow' | 'callback', capability: string, value: string): [key: string, value: string]
  /** The Redis key to read a capability's value from, and how to read what is there. */
  get(kind: 'flow', capability: string): [key: string, read: (stored: string) => string | undefined]
}

export const BARE_PREFIX = 'base:'
export const SEALED_PREFIX = 'floor:'
const short = { flow: 'flow', callback: 'cb' } as const

export const bare: Keeping = {
  put: (kind, capability, value) => [`${BARE_PREFIX}${short[kind]}:{${capability}}`, value],
  get: (kind, capability) => [`${BARE_PREFIX}${short[kind]}:{${capability}}`, (stored) => stored],
}

/** The sealed floor's keeping; the bench seeds its /hash-check flow with it too. */
export function sealedKeeping(secret: string): Keeping {
  const sealer = new Sealer([secret])
  return {
    put(kind, capability, value) {
      const sealing = sealer.derive(kind, capability)
      const key = `${SEALED_PREFIX}${short[kind]}:{${sealing.name}}`
      return [key, sealer.seal(sealing, key, value)]
    },
    get(kind, capability) {
      const sealing = sealer.derive(kind, capability)
      const key = `${SEALED_PREFIX}${short[kind]}:{${sealing.name}}`
      return [key, (stored) => sealer.open(sealing, key, stored)]
    },
  }
}
