import type { Redis } from 'ioredis'
import RedisMock from 'ioredis-mock'
import { describe, expect, it } from 'vitest'
import { FlowStore } from './flow-store.js'

const SECRETS = ['a store secret of at least thirty-two characters']
const ISSUER = 'https://as.example'
const CALLBACK = 'http://localhost:3000/callback'
const REG = { client_id: 'dyn-client-1', client_secret: 'dyn-secret-1', registration_access_token: 'rat-1' }

// ioredis-mock instances share one keyspace: each test that counts keys empties it first.
const setup = (secrets = SECRETS, redis = new RedisMock() as unknown as Redis) => ({
  redis,
  regs: new FlowStore(redis, { expireSeconds: 60, callbackWaitSeconds: 600, secrets }).registrations({
    ttl: 86_400,
    clientName: 'broker',
    recheck: 10,
    perHost: 3,
  }),
})

describe('RegistrationStore', () => {
  it('keeps a registration per issuer and callback, sealed: no client_id, secret or issuer in a key or value', async () => {
    const { redis, regs } = setup()
    await redis.flushall()
    await regs.put(ISSUER, CALLBACK, REG)
    expect(await regs.get(ISSUER, CALLBACK)).toMatchObject(REG)
    expect(await regs.get(ISSUER, 'http://localhost:4000/callback')).toBeUndefined()
    expect(await regs.get('https://other.example', CALLBACK)).toBeUndefined()
    // The registration, and the link from its client_id to its issuer.
    const keys = await redis.keys('*')
    expect(keys).toHaveLength(2)
    const dump = keys.join() + (await Promise.all(keys.map((k) => redis.get(k)))).join()
    for (const secret of ['dyn-client-1', 'dyn-secret-1', 'rat-1', 'as.example', 'localhost'])
      expect(dump).not.toContain(secret)
    // The default lifetime: registration.ttl.
    for (const key of keys) expect(await redis.ttl(key)).toBeGreaterThan(86_000)
    expect(await regs.owner('dyn-client-1')).toBe(ISSUER)
    expect(await regs.owner('another-client')).toBeUndefined()
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
    await redis.flushall()
    await regs.put(ISSUER, CALLBACK, REG, 1e20)
    await regs.put('https://b.example', CALLBACK, { ...REG, client_id: 'dyn-client-2' }, Infinity)
    const keys = await redis.keys('*')
    expect(keys).toHaveLength(4)
    for (const key of keys) expect(await redis.ttl(key)).toBeLessThanOrEqual(86_400)
    // ioredis-mock instances share one keyspace: the next test starts from an empty one.
    await redis.flushall()
  })

  it("keeps a client credentials registration apart from the code flow's, and leaves the code flow's key as it was", async () => {
    const { redis, regs } = setup()
    await redis.flushall()
    await regs.put(ISSUER, CALLBACK, REG)
    const before = await redis.keys('*')
    await regs.put(ISSUER, CALLBACK, { client_id: 'cc-1', client_secret: 'cc-secret' }, undefined, 'client_credentials')
    expect(await redis.keys('*')).toHaveLength(4)
    expect(await regs.get(ISSUER, CALLBACK)).toMatchObject(REG)
    expect(await regs.get(ISSUER, CALLBACK, 'authorization_code')).toMatchObject(REG)
    expect(await regs.get(ISSUER, CALLBACK, 'client_credentials')).toMatchObject({ client_id: 'cc-1' })
    await regs.drop(ISSUER, CALLBACK, 'client_credentials')
    expect(await regs.get(ISSUER, CALLBACK, 'client_credentials')).toBeUndefined()
    expect((await redis.keys('*')).filter((k) => before.includes(k)).sort()).toEqual([...before].sort())
  })

  it('links a resource to the first server whose tokens it delivered, until the link lapses; sealed like the rest', async () => {
    const { redis, regs } = setup()
    await redis.flushall()
    const resource = 'https://mcp.example/mcp'
    expect(await regs.resourceIssuer(resource, CALLBACK)).toBeUndefined()
    expect(await regs.bindResource(resource, CALLBACK, ISSUER)).toBe(ISSUER)
    // Another server later: the first link stays.
    expect(await regs.bindResource(resource, CALLBACK, 'https://evil.example')).toBe(ISSUER)
    expect(await regs.resourceIssuer(resource, CALLBACK)).toBe(ISSUER)
    expect(await regs.resourceIssuer(resource, 'http://localhost:4000/callback')).toBeUndefined()
    const keys = await redis.keys('*')
    const dump = keys.join() + (await Promise.all(keys.map((k) => redis.get(k)))).join()
    for (const text of ['mcp.example', 'as.example', 'evil.example']) expect(dump).not.toContain(text)
  })

  it('is found by every instance sharing the store and its secrets, and by none with other secrets', async () => {
    const redis = new RedisMock() as unknown as Redis
    await setup(SECRETS, redis).regs.put(ISSUER, CALLBACK, REG)
    expect(await setup(SECRETS, redis).regs.get(ISSUER, CALLBACK)).toMatchObject(REG)
    expect(await setup(['another secret of thirty-two characters!!'], redis).regs.get(ISSUER, CALLBACK)).toBeUndefined()
  })

  it('keeps a registration no flow has used briefly, and its whole lifetime once confirmed', async () => {
    const { redis, regs } = setup()
    await redis.flushall()
    await regs.put(ISSUER, CALLBACK, { ...REG, unused: true })
    const ttls = await Promise.all((await redis.keys('*')).map((k) => redis.ttl(k)))
    expect(Math.min(...ttls)).toBeLessThanOrEqual(15 * 60)
    await regs.confirm(ISSUER, CALLBACK)
    expect((await regs.get(ISSUER, CALLBACK))?.unused).toBeUndefined()
    const after = await Promise.all((await redis.keys('*')).map((k) => redis.ttl(k)))
    expect(Math.min(...after)).toBeGreaterThan(86_000)
  })

  it('admits at most registration.perHost new registrations per host within registration.ttl', async () => {
    const { redis, regs } = setup()
    await redis.flushall()
    for (let n = 0; n < 3; n++) await regs.admitNew(`https://hostile.example/as/${n}`)
    await expect(regs.admitNew('https://hostile.example/as/9')).rejects.toThrow(
      /registered 3 clients at hostile.example/,
    )
    // Another host is counted apart; every counter has a lifetime.
    await regs.admitNew('https://honest.example')
    for (const key of await redis.keys('*')) expect(await redis.ttl(key)).toBeGreaterThan(0)
  })
})
