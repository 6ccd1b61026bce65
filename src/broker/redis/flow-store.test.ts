import { Redis } from 'ioredis'
import RedisMock from 'ioredis-mock'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type RedisServer, startRedis } from '../../../test/helpers/redis.js'
import { newId } from '../ids.js'
import { type FlowEntry, FlowStore } from './flow-store.js'

let redis: RedisServer
let client: Redis

beforeAll(async () => {
  redis = await startRedis()
  client = new Redis({ port: redis.port })
})
afterAll(async () => {
  client?.disconnect()
  await redis?.stop()
})

const entry = (): FlowEntry => {
  const now = Date.now()
  return { hash: newId(), plugin: 'oauth_2_3-legged', record: { auth_type: 'oauth', client_id: 'c' }, progress: 'stored', createdAt: now, expiresAt: now + 60_000, data: {} }
}

// The same behaviour on a real Redis and on the embedded store (whose Lua runs elsewhere).
describe.each([
  ['real Redis', () => new FlowStore(client, 60)],
  ['embedded store', () => new FlowStore(new RedisMock() as unknown as Redis, 60)],
])('FlowStore on %s', (_label, makeStore) => {
  it('claims a one-shot flow once: the first claim sees stored, later ones started', async () => {
    const store = makeStore()
    const e = entry()
    await store.create(e)
    const first = await store.claim(e.hash)
    expect(first).toMatchObject({ reusable: false, entry: { hash: e.hash, progress: 'stored', record: e.record, data: {} } })
    expect((await store.claim(e.hash))!.entry.progress).toBe('started')
    expect((await store.get(e.hash))!.progress).toBe('started')
  })

  it('knows no hash, code or callback id longer than 128 characters, whatever the store holds', async () => {
    const store = makeStore()
    const long = 'h'.repeat(129)
    await store.client.set(store.keys.result(long), '{"x":1}')
    await store.client.set(store.keys.callback(long), 'some-hash')
    expect(await store.get(long)).toBeUndefined()
    expect(await store.claim(long)).toBeUndefined()
    expect(await store.correlated(long)).toBeUndefined()
    expect(await store.takeResult(long)).toBeUndefined()
    expect(await store.client.exists(store.keys.result(long))).toBe(1)
  })

  it('claims a flow whose first step ran at /store straight to awaiting_callback, with its redirect', async () => {
    const store = makeStore()
    const e = { ...entry(), data: { state: 's', nonce: 'n' } }
    await store.create(e, { redirect: 'https://provider.example/authorize?state=s' })
    expect(await store.claim(e.hash)).toMatchObject({ redirect: 'https://provider.example/authorize?state=s', entry: { progress: 'stored', data: { state: 's', nonce: 'n' } } })
    expect((await store.get(e.hash))!.progress).toBe('awaiting_callback')
    expect((await store.claim(e.hash))!.entry.progress).toBe('awaiting_callback')
  })

  it('never claims a reusable flow', async () => {
    const store = makeStore()
    const e = entry()
    await store.create(e, { reusable: true })
    expect(await store.claim(e.hash)).toMatchObject({ reusable: true, entry: { progress: 'stored' } })
    expect((await store.claim(e.hash))!.entry.progress).toBe('stored')
  })

  it('advances with data and error, and refuses a move from the wrong progress', async () => {
    const store = makeStore()
    const e = entry()
    await store.create(e)
    await store.claim(e.hash)
    expect(await store.advance('stored', { ...e, progress: 'awaiting_callback' })).toBe('started')
    expect(await store.advance('started', { ...e, progress: 'awaiting_callback', data: { state: 's', nonce: 'n' } })).toBe('ok')
    expect(await store.advance('awaiting_callback', { ...e, progress: 'failed', data: { state: 's' }, error: { code: 'x', description: 'y' } })).toBe('ok')
    const got = (await store.get(e.hash))!
    expect(got).toMatchObject({ progress: 'failed', data: { state: 's' }, error: { code: 'x', description: 'y' }, record: e.record, expiresAt: e.expiresAt })
  })

  it('keeps unicode, line breaks in values and the expiry through every step', async () => {
    const store = makeStore()
    const e = { ...entry(), record: { auth_type: 'oauth', client_id: 'c', scope: 'é 😀 ü\nline\r\n"q"\\' } }
    await store.create(e, { redirect: 'https://p.example/a?scope=%C3%A9' })
    await store.claim(e.hash)
    expect(await store.advance('awaiting_callback', { ...e, progress: 'exchanging', data: { note: 'ß\n😀' } })).toBe('ok')
    const got = (await store.get(e.hash))!
    expect(got).toMatchObject({ progress: 'exchanging', record: e.record, data: { note: 'ß\n😀' } })
    const ttl = await store.client.pttl(store.keys.flow(e.hash))
    expect(ttl).toBeGreaterThan(50_000)
    expect(ttl).toBeLessThanOrEqual(60_000)
  })

  it('refuses a redirect with a line break, writing nothing', async () => {
    const store = makeStore()
    const e = entry()
    await expect(store.create(e, { redirect: 'https://p.example/\nx' })).rejects.toMatchObject({ code: 'INTERNAL' })
    expect(await store.get(e.hash)).toBeUndefined()
  })

  it('takes a flow kept in an earlier format (a Redis hash) for a gone one, not a store failure', async () => {
    const store = makeStore()
    const e = entry()
    await store.client.hset(store.keys.flow(e.hash), 'progress', 'stored', 'entry', '{}')
    expect(await store.get(e.hash)).toBeUndefined()
    expect(await store.claim(e.hash)).toBeUndefined()
    expect(await store.advance('stored', e)).toBe('gone')
  })

  it('knows nothing of an unknown hash', async () => {
    const store = makeStore()
    expect(await store.get('nope')).toBeUndefined()
    expect(await store.claim('nope')).toBeUndefined()
    expect(await store.advance('stored', { ...entry(), hash: 'nope' })).toBe('gone')
  })
})

describe('FlowStore writes on a real Redis', () => {
  it("sends one event-loop turn's operations in one write to the socket", async () => {
    const store = new FlowStore(client, 60)
    await client.ping()
    const socket = client.stream as unknown as { _write: (...a: unknown[]) => void; _writev: (chunks: unknown[], cb: unknown) => void }
    const writes: number[] = []
    const [write, writev] = [socket._write, socket._writev]
    socket._write = function (...a: unknown[]) {
      writes.push(1)
      return write.apply(this, a)
    }
    socket._writev = function (chunks: unknown[], cb: unknown) {
      writes.push(chunks.length)
      return writev.call(this, chunks, cb)
    }
    try {
      const entries = Array.from({ length: 5 }, entry)
      await Promise.all(entries.map((e) => store.create(e)))
      expect(writes).toEqual([5])
      // Each operation still gets its own answer.
      expect((await Promise.all(entries.map((e) => store.get(e.hash)))).map((e) => e?.hash)).toEqual(entries.map((e) => e.hash))
      expect(writes).toEqual([5, 5])
    } finally {
      Object.assign(socket, { _write: write, _writev: writev })
    }
  })
})
