import { Cluster, Redis } from 'ioredis'
import RedisMock from 'ioredis-mock'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type RedisServer, startRedis } from '../../../test/helpers/redis.js'
import { coalesceTurn, socketOf } from './coalesce.js'

let redis: RedisServer
let client: Redis
beforeAll(async () => {
  redis = await startRedis()
  client = new Redis({ port: redis.port })
  await client.ping()
})
afterAll(async () => {
  client?.disconnect()
  await redis?.stop()
})

describe('coalesceTurn', () => {
  // The tripwire for ioredis's private `stream`: an upgrade that renames it fails here.
  it("finds the socket of a connected ioredis client (ioredis's `stream`)", () => {
    expect(socketOf(client)).toBeDefined()
    expect(socketOf(client)!.remotePort).toBe(redis.port)
  })

  it('sends the commands of one turn in one socket write, each with its own answer', async () => {
    const socket = socketOf(client)!
    let writes = 0
    const writev = socket._writev?.bind(socket)
    const write = socket._write.bind(socket)
    socket._writev = (chunks, cb) => (writes++, writev!(chunks, cb))
    socket._write = (chunk, enc, cb) => (writes++, write(chunk, enc, cb))
    try {
      coalesceTurn(client)
      const answers = Promise.all([1, 2, 3, 4, 5].map((n) => client.echo(`n${n}`)))
      expect(socket.writableCorked).toBe(1)
      expect(await answers).toEqual(['n1', 'n2', 'n3', 'n4', 'n5'])
      expect(writes).toBe(1)
    } finally {
      delete (socket as Partial<typeof socket>)._writev
      delete (socket as Partial<typeof socket>)._write
    }
  })

  it('leaves a client without a socket of its own alone (the embedded store, a Cluster)', () => {
    expect(socketOf(new RedisMock() as unknown as Redis)).toBeUndefined()
    const cluster = new Cluster([{ host: '127.0.0.1', port: 1 }], { lazyConnect: true })
    expect(() => coalesceTurn(cluster as unknown as Redis)).not.toThrow()
    expect(socketOf(cluster as unknown as Redis)).toBeUndefined()
    cluster.disconnect()
  })
})
