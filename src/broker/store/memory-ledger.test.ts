import { randomBytes } from 'node:crypto'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import type { Redis } from 'ioredis'
import RedisMock from 'ioredis-mock'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { memoryBroker } from '../../../test/helpers/deps.js'
import { testStore } from '../../../test/helpers/flow-store.js'
import { buildServer } from '../http/build.js'
import type { Broker } from '../index.js'
import { type FlowEntry, FlowStore } from './flow-store.js'
import { MemoryLedger, SWEEP_MS } from './memory-ledger.js'
import { RegistrationStore } from './registrations.js'

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void
const heapMb = () => {
  gc()
  gc()
  return process.memoryUsage().heapUsed / 2 ** 20
}
// Expiry is read off Date.now (the ledger's and ioredis-mock's) and swept by the ledger's setInterval:
// the tests move both with fake timers instead of waiting seconds of wall time.
const fakeClock = () => vi.useFakeTimers({ toFake: ['Date', 'setInterval', 'clearInterval'] })
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
  vi.useRealTimers()
})

describe('the embedded store', () => {
  it('frees expired flows: 1,000 flows of 60 kB with store.expire 1 leave the heap as it was', async () => {
    fakeClock()
    broker = await memoryBroker({ store: { expire: 1 } })
    const app = await buildServer(broker)
    const before = heapMb()
    for (let i = 0; i < 1000; i++) {
      const res = await app.inject({ method: 'POST', url: '/store', payload: bigRecord() })
      expect(res.statusCode).toBe(200)
      // Time passes while storing, as it does for a real client: the sweep frees expired flows meanwhile.
      if (i % 250 === 249) await vi.advanceTimersByTimeAsync(SWEEP_MS)
    }
    // Kept, they would be ~80 MB (sealed, base64); the sweep frees them once expired, even while storing.
    await vi.advanceTimersByTimeAsync(1000 + 2 * SWEEP_MS)
    const after = heapMb()
    expect(after - before).toBeLessThan(15)
    await app.close()
  }, 60_000)

  it('refuses a new flow past store.memoryLimit with 503 STORE_FULL, and takes flows again once they expired', async () => {
    fakeClock()
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
    await vi.advanceTimersByTimeAsync(1000 + 2 * SWEEP_MS)
    expect((await app.inject({ method: 'POST', url: '/store', payload: bigRecord() })).statusCode).toBe(200)
    await app.close()
  }, 30_000)

  it("sweeps a device flow's poll lease once it lapses: the mock keeps a key nobody reads again for ever", async () => {
    // A keyspace of its own: ioredis-mock instances on one host and port share theirs.
    const redis = new RedisMock({ port: 64_999 }) as unknown as Redis
    const ledger = new MemoryLedger(redis, 1024 * 1024)
    const store = testStore(redis, { ledger })
    vi.useFakeTimers({ toFake: ['Date'] })
    expect(await store.takePollLease('a-device-flow-hash', 50)).toEqual({ taken: true })
    await store.holdPollLease('a-device-flow-hash', 50)
    expect(ledger.size).toBe(1)
    vi.advanceTimersByTime(100)
    await ledger.sweep()
    expect(ledger.size).toBe(0)
    expect(await redis.dbsize()).toBe(0)
    ledger.close()
  })

  it('accounts for every write: after each operation of the flow and registration stores, the ledger holds what the store holds', async () => {
    // A keyspace of its own: ioredis-mock instances on one host and port share theirs.
    const redis = new RedisMock({ port: 64_998 }) as unknown as Redis
    const ledger = new MemoryLedger(redis, 16 * 1024 * 1024)
    const store = testStore(redis, { ledger })
    const policy = { ttl: 3600, clientName: 'broker', recheck: 60, perHost: 10 }
    const registrations = store.registrations(policy)
    const hash = 'a-flow-hash-of-the-ledger-test'
    const now = Date.now()
    const entry: FlowEntry = {
      hash,
      plugin: 'oauth_2_3-legged',
      record: { auth_type: 'oauth', authorize_url: 'https://as.example/authorize' },
      progress: 'stored',
      createdAt: now,
      expiresAt: now + 60_000,
      data: { state: 'the-state' },
    }
    const issuer = 'https://as.example'
    const redirectUri = 'http://localhost/callback'
    // Every method of both stores, driven in this order; a method added to either fails the check
    // below until it is driven here too (or named as one of the stores' own helpers).
    let claimed: Awaited<ReturnType<FlowStore['claim']>>
    const flowOps: Record<string, () => Promise<unknown>> = {
      create: () => store.create(entry),
      get: () => store.get(hash),
      claim: async () => (claimed = await store.claim(hash)),
      advance: () =>
        store.advance('started', {
          ...entry,
          progress: 'awaiting_callback',
          data: { ...entry.data, more: 'x'.repeat(500) },
        }),
      // Back to the value the claim found (smaller than the one advance wrote).
      unstart: () => store.unstart(claimed!),
      // Writes nothing: a lookup of this process's undos still being made.
      unclaimingOf: async () => store.unclaimingOf(hash),
      correlate: () => store.correlate('a-request-token', hash, Date.now() + 60_000),
      correlated: () => store.correlated('a-request-token'),
      putResult: () => store.putResult('a-result-code', { access_token: 'tok' }),
      takeResult: () => store.takeResult('a-result-code'),
      putReplay: () => store.putReplay(hash, { status: 302 }, 30_000),
      takeReplay: () => store.takeReplay(hash),
      takePollLease: () => store.takePollLease(hash, 5000),
      holdPollLease: () => store.holdPollLease(hash, 7000),
      registrations: async () => store.registrations(policy),
      flowKey: async () => store.flowKey(hash),
      failedOverWithin: async () => store.failedOverWithin(1000),
      ping: () => store.ping(),
    }
    const registrationOps: Record<string, () => Promise<unknown>> = {
      admitNew: () => registrations.admitNew(issuer),
      put: () => registrations.put(issuer, redirectUri, { client_id: 'a-client', unused: true }),
      get: () => registrations.get(issuer, redirectUri),
      confirm: () => registrations.confirm(issuer, redirectUri),
      owner: () => registrations.owner('a-client'),
      bindResource: () => registrations.bindResource('https://rs.example/mcp', redirectUri, issuer),
      resourceIssuer: () => registrations.resourceIssuer('https://rs.example/mcp', redirectUri),
      drop: () => registrations.drop(issuer, redirectUri),
    }
    // The stores' own helpers (their writes go out through io.ts's `stored`, as every other write does).
    const helpers = ['find', 'readLink', 'writeLink']
    expect(Object.keys(flowOps).sort()).toEqual(methodsOf(FlowStore, helpers))
    expect(Object.keys(registrationOps).sort()).toEqual(methodsOf(RegistrationStore, helpers))

    const compare = async (after: string) => {
      const keys = (await redis.keys('*')).sort()
      const held = ledger.entries()
      expect([...held.keys()].sort(), `the keys after ${after}`).toEqual(keys)
      let total = 0
      for (const key of keys) {
        const [bytes, ttl] = [key.length + (await redis.strlen(key)), await redis.pttl(key)]
        total += bytes
        expect(held.get(key)?.bytes, `the bytes of a key after ${after}`).toBe(bytes)
        const expiresAt = held.get(key)?.expiresAt
        if (ttl < 0) expect(expiresAt, `the lifetime of a key after ${after}`).toBeUndefined()
        else
          expect(Math.abs(expiresAt! - (Date.now() + ttl)), `the lifetime of a key after ${after}`).toBeLessThan(1000)
      }
      expect(ledger.bytes, `the bytes after ${after}`).toBe(total)
    }
    for (const [name, op] of Object.entries(flowOps)) {
      await op()
      await compare(`FlowStore.${name}`)
    }
    for (const [name, op] of Object.entries(registrationOps)) {
      await op()
      await compare(`RegistrationStore.${name}`)
    }
    // What the run wrote is there to compare (a flow, a correlation, a poll lease, the registrations' links).
    expect(ledger.size).toBeGreaterThan(3)
    ledger.close()
  })
})

/** The methods on a class's prototype (getters aside), less its own helpers. */
function methodsOf(type: { prototype: object }, helpers: string[]): string[] {
  return Object.getOwnPropertyNames(type.prototype)
    .filter((name) => name !== 'constructor' && !helpers.includes(name))
    .filter((name) => typeof Object.getOwnPropertyDescriptor(type.prototype, name)?.value === 'function')
    .sort()
}
