import { Redis } from 'ioredis'
import { afterAll, beforeAll } from 'vitest'
import { type RedisServer, startRedis } from './redis.js'

/** A file's own redis-server and a client of it: set before its tests (beforeAll), stopped after them. */
export interface RedisPeer {
  readonly server: RedisServer
  readonly client: Redis
}

/** Starts a redis-server for the test file that calls this at its top level, and a client connected to it. */
export function redisPeer(): RedisPeer {
  const peer = {} as { server: RedisServer; client: Redis }
  beforeAll(async () => {
    peer.server = await startRedis()
    peer.client = new Redis({ port: peer.server.port })
  })
  afterAll(async () => {
    peer.client?.disconnect()
    await peer.server?.stop()
  })
  return peer
}
