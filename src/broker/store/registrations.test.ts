import type { Redis } from 'ioredis'
import RedisMock from 'ioredis-mock'
import { describe, expect, it } from 'vitest'
import { FlowStore } from './flow-store.js'

const SECRETS = ['a store secret of at least thirty-two characters']
const ISSUER = 'https://as.example'
const CALLBACK = 'http://localhost:3000/callback'
const REG = { client_id: 'dyn-client-1', client_secret: 'dyn-secret-1', registration_access_token: 'rat-1' }

const setup = (secrets = SECRETS, redis = new RedisMock() as unknown as Redis) => ({
  redis,
  regs: new FlowStore(redis, { expireSeconds: 60, callbackWaitSeconds: 600, secrets }).registrations(86_400),
})

describe('RegistrationStore', () => {
  it('keeps a registration per issuer and callback, sealed: no client_id, secret or issuer in a key or value', async () => {
    const { redis, regs } = setup()
    await regs.put(ISSUER, CALLBACK, REG)
    expect(await regs.get(ISSUER, CALLBACK)).toMatchObject(REG)
    expect(await regs.get(ISSUER, 'http://localhost:4000/callback')).toBeUndefined()
    expect(await regs.get('https://other.example', CALLBACK)).toBeUndefined()
    const keys = await redis.keys('*')
    expect(keys).toHaveLength(1)
    const dump = keys.join() + (await redis.get(keys[0]!))
    for (const secret of ['dyn-client-1', 'dyn-secret-1', 'rat-1', 'as.example', 'localhost'])
      expect(dump).not.toContain(secret)
    // The default lifetime: registration.ttl.
    expect(await redis.ttl(keys[0]!)).toBeGreaterThan(86_000)
  })

  it('lives until client_secret_expires_at when given, and is dropped on demand', async () => {
    const { redis, regs } = setup()
    await regs.put(ISSUER, CALLBACK, REG, Date.now() + 600_000)
    const [key] = await redis.keys('*')
    expect(await redis.ttl(key!)).toBeLessThanOrEqual(600)
    await regs.drop(ISSUER, CALLBACK)
    expect(await regs.get(ISSUER, CALLBACK)).toBeUndefined()
  })

  it('lives registration.ttl at most, however far (or Infinity) the server puts client_secret_expires_at', async () => {
    const { redis, regs } = setup()
    await regs.put(ISSUER, CALLBACK, REG, 1e20)
    await regs.put('https://b.example', CALLBACK, REG, Infinity)
    const keys = await redis.keys('*')
    expect(keys).toHaveLength(2)
    for (const key of keys) expect(await redis.ttl(key)).toBeLessThanOrEqual(86_400)
    // ioredis-mock instances share one keyspace: the next test starts from an empty one.
    await redis.flushall()
  })

  it("keeps a client credentials registration apart from the code flow's, and leaves the code flow's key as it was", async () => {
    const { redis, regs } = setup()
    await regs.put(ISSUER, CALLBACK, REG)
    const codeKey = (await redis.keys('*'))[0]
    await regs.put(ISSUER, CALLBACK, { client_id: 'cc-1', client_secret: 'cc-secret' }, undefined, 'client_credentials')
    expect(await redis.keys('*')).toHaveLength(2)
    expect(await regs.get(ISSUER, CALLBACK)).toMatchObject(REG)
    expect(await regs.get(ISSUER, CALLBACK, 'authorization_code')).toMatchObject(REG)
    expect(await regs.get(ISSUER, CALLBACK, 'client_credentials')).toMatchObject({ client_id: 'cc-1' })
    await regs.drop(ISSUER, CALLBACK, 'client_credentials')
    expect(await regs.get(ISSUER, CALLBACK, 'client_credentials')).toBeUndefined()
    expect(await redis.keys('*')).toEqual([codeKey])
  })

  it('is found by every instance sharing the store and its secrets, and by none with other secrets', async () => {
    const redis = new RedisMock() as unknown as Redis
    await setup(SECRETS, redis).regs.put(ISSUER, CALLBACK, REG)
    expect(await setup(SECRETS, redis).regs.get(ISSUER, CALLBACK)).toMatchObject(REG)
    expect(await setup(['another secret of thirty-two characters!!'], redis).regs.get(ISSUER, CALLBACK)).toBeUndefined()
  })
})
