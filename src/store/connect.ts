import { Socket } from 'node:net'
import { Redis } from 'ioredis'
import RedisMock from 'ioredis-mock'
import { BrokerError } from '../errors.js'
import type { BrokerConfig } from '../config/schema.js'

export type StoreDriver = 'redis' | 'memory'

/** Connection options shared by every real Redis client the broker opens. */
function redisOptions(store: BrokerConfig['store']) {
  return {
    host: store.host,
    port: store.port,
    password: store.pass,
    // Fail fast while Redis is away (a 503, not a hang) and let ioredis reconnect in the background.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: store.timeout,
    connectTimeout: Math.max(500, store.timeout),
    retryStrategy: (times: number) => Math.min(100 * times, 1000),
    lazyConnect: true,
  }
}

/** A new Redis client for the chosen driver; the caller owns it and must quit it. */
export async function connectStore(store: BrokerConfig['store'], driver: StoreDriver): Promise<Redis> {
  if (driver === 'memory') return new RedisMock() as unknown as Redis
  const client = new Redis(redisOptions(store))
  // Without this, an unreachable Redis prints ioredis's "Unhandled error event" on every retry.
  client.on('error', () => {})
  try {
    await client.connect()
  } catch (err) {
    client.disconnect()
    throw new BrokerError(
      'STORE_UNAVAILABLE',
      `Redis did not answer at ${store.host}:${store.port} (${(err as Error).message}).`,
      { store: `${store.host}:${store.port}` },
    )
  }
  return client
}

/** Whether something answers PING at the configured Redis address within `ms` (for store.driver auto). */
export async function redisAnswers(store: BrokerConfig['store'], ms = 500): Promise<boolean> {
  return new Promise((resolvePromise) => {
    const socket = new Socket()
    let buffer = ''
    const done = (ok: boolean) => {
      socket.destroy()
      resolvePromise(ok)
    }
    socket.setTimeout(ms, () => done(false))
    socket.once('error', () => done(false))
    socket.on('data', (chunk) => {
      buffer += chunk.toString('latin1')
      // Any RESP status reply (+PONG, +OK, -NOAUTH …) means a Redis is there.
      if (buffer.includes('\r\n')) done(buffer.startsWith('+') || buffer.startsWith('-'))
    })
    socket.connect(store.port, store.host, () => {
      socket.write('PING\r\n')
    })
  })
}

/** Decides the driver for store.driver `auto`: Redis when it answers within about half a second. */
export async function resolveDriver(store: BrokerConfig['store']): Promise<StoreDriver> {
  if (store.driver !== 'auto') return store.driver
  return (await redisAnswers(store)) ? 'redis' : 'memory'
}
