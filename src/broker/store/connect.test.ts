import { describe, expect, it } from 'vitest'
import { configSchema } from '../../config/schema.js'
import { ERRORS } from '../../errors/index.js'
import { connectStore } from './connect.js'

describe('connectStore', () => {
  it("names the socket's own reason for a Redis host that does not resolve, and --store memory as the way out", async () => {
    // .invalid never resolves (RFC 2606), without waiting on any network.
    const store = configSchema.parse({ store: { host: 'redis.invalid', driver: 'redis' } }).store
    const err = await connectStore(store, 'redis').then(
      () => undefined,
      (e: Error) => e,
    )
    expect(err?.message).toMatch(/^Redis did not answer at redis\.invalid:6379 \(.*ENOTFOUND.*\)\.$/)
    expect(err?.message).not.toContain('Connection is closed')
    expect(ERRORS.STORE_UNAVAILABLE.next).toContain('--store memory')
  })
})
