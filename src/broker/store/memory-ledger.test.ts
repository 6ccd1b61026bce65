import { randomBytes } from 'node:crypto'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import type { Redis } from 'ioredis'
import RedisMock from 'ioredis-mock'
import { afterEach, describe, expect, it } from 'vitest'
import { memoryBroker } from '../../../test/helpers/deps.js'
import { buildServer } from '../http/build.js'
import type { Broker } from '../index.js'
import { FlowStore } from './flow-store.js'
import { MemoryLedger, SWEEP_MS } from './memory-ledger.js'

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void
const heapMb = () => {
  gc()
  gc()
  return process.memoryUsage().heapUsed / 2 ** 20
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
// A record of about 60 kB (values are at most 16 kB each), as an app with many authorize params sends;
// random, as the store compresses what it seals.
const bigRecord = () => ({
  auth_version: '2',
  auth_leg: '2',
  client_id: 'c',
  access_url: 'http://127.0.0.1:1/token',
  ...Object.fromEntries([1, 2, 3, 4].map((n) => [`extra_${n}`, randomBytes(11_250).toString('base64')])),
})

let broker: Broker | undefined
afterEach(async () => {
  await broker?.close()
  broker = undefined
})

describe('the embedded store', () => {
  it('frees expired flows: 1,000 flows of 60 kB with store.expire 1 leave the heap as it was', async () => {
    broker = await memoryBroker({ store: { expire: 1 } })
    const app = await buildServer(broker)
    const before = heapMb()
    for (let i = 0; i < 1000; i++) {
      const res = await app.inject({ method: 'POST', url: '/store', payload: bigRecord() })
      expect(res.statusCode).toBe(200)
    }
    // Kept, they would be ~80 MB (sealed, base64); the sweep frees them once expired, even while storing.
    await sleep(1000 + 2 * SWEEP_MS)
    const after = heapMb()
    expect(after - before).toBeLessThan(15)
    await app.close()
  }, 60_000)

  it('refuses a new flow past store.memoryLimit with 503 STORE_FULL, and takes flows again once they expired', async () => {
    broker = await memoryBroker({ store: { expire: 1, memoryLimit: 1 } })
    const app = await buildServer(broker)
    const codes: number[] = []
    for (let i = 0; i < 30; i++)
      codes.push((await app.inject({ method: 'POST', url: '/store', payload: bigRecord() })).statusCode)
    const refused = await app.inject({ method: 'POST', url: '/store', payload: bigRecord() })
    expect(refused.statusCode).toBe(503)
    expect(refused.json()).toMatchObject({ code: 'STORE_FULL' })
    expect(codes.filter((c) => c === 200).length).toBeGreaterThan(0)
    expect(codes.every((c) => c === 200 || c === 503)).toBe(true)
    await sleep(1000 + 2 * SWEEP_MS)
    expect((await app.inject({ method: 'POST', url: '/store', payload: bigRecord() })).statusCode).toBe(200)
    await app.close()
  }, 30_000)

  it("sweeps a device flow's poll lease once it lapses: the mock keeps a key nobody reads again for ever", async () => {
    // A keyspace of its own: ioredis-mock instances on one host and port share theirs.
    const redis = new RedisMock({ port: 64_999 }) as unknown as Redis
    const ledger = new MemoryLedger(redis, 1024 * 1024)
    const store = new FlowStore(redis, {
      expireSeconds: 60,
      callbackWaitSeconds: 600,
      secrets: ['a store secret of at least thirty-two characters'],
      ledger,
    })
    expect(await store.takePollLease('a-device-flow-hash', 50)).toEqual({ taken: true })
    await store.holdPollLease('a-device-flow-hash', 50)
    expect(ledger.size).toBe(1)
    await sleep(100)
    await ledger.sweep()
    expect(ledger.size).toBe(0)
    expect(await redis.dbsize()).toBe(0)
    ledger.close()
  })
})
