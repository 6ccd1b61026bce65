import { readFileSync } from 'node:fs'
import { Socket } from 'node:net'
// Types only: ioredis and ioredis-mock (its Lua VM) are imported when a client is made, so a
// process that only decides the driver (serve's primary, the dashboard) never loads them.
import type { Redis, RedisOptions } from 'ioredis'
import type { BrokerConfig } from '../../config/schema.js'
import { brokerError } from '../../errors/index.js'

export type StoreDriver = 'redis' | 'memory'
type StoreConfig = BrokerConfig['store']

/** Where the store is, in words, for notices and errors (never with a password). */
export function describeStore(store: StoreConfig): string {
  if (store.cluster) return `cluster ${store.cluster.map((n) => `${n.host}:${n.port}`).join(',')}`
  if (store.sentinels)
    return `sentinel ${store.name} via ${store.sentinels.map((n) => `${n.host}:${n.port}`).join(',')}`
  if (store.url) {
    const u = new URL(store.url)
    return `${u.protocol}//${u.host}${u.pathname && u.pathname !== '/' ? u.pathname : ''}`
  }
  return `${store.host}:${store.port}`
}

/** Whether several broker instances are expected to share this store (Sentinel or Cluster). */
export const isMultiInstanceStore = (store: StoreConfig): boolean => !!(store.cluster || store.sentinels)

/** Connection options shared by every real Redis client the broker opens. */
function redisOptions(store: StoreConfig, connectionName?: string): RedisOptions {
  return {
    password: store.pass,
    // Names this instance to others starting on the same Redis (instances.ts).
    connectionName,
    // Fail fast while Redis is away (a 503, not a hang) and let ioredis reconnect in the background.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    // A command sent before the connection dropped may have been carried out with its reply lost.
    // Replaying it is not safe: the flow store's writes are SET NX and compare-and-set scripts, whose
    // replay finds its own first write and reads as a clash (a 500, a start URL refused). It fails
    // (store.timeout, then STORE_UNAVAILABLE) and the app or user tries again.
    autoResendUnfulfilledCommands: false,
    commandTimeout: store.timeout,
    connectTimeout: Math.max(500, store.timeout),
    retryStrategy: (times: number) => Math.min(100 * times, 1000),
    // After a Sentinel failover the old master answers READONLY: reconnect to find the new one.
    reconnectOnError: (err: Error) => err.message.startsWith('READONLY'),
    lazyConnect: true,
    // No auto-pipelining: the flow store coalesces each turn's writes itself (coalesceTurn in coalesce.ts).
    tls: store.tls
      ? { ca: store.tls.ca ? readFileSync(store.tls.ca) : undefined, rejectUnauthorized: store.tls.rejectUnauthorized }
      : undefined,
  }
}

/** A client for the configured topology: a Cluster, a Sentinel-managed master, a URL, or host:port. */
async function newClient(store: StoreConfig, connectionName?: string): Promise<Redis> {
  const { Cluster, Redis } = await import('ioredis')
  const base = redisOptions(store, connectionName)
  if (store.cluster) {
    const { password, tls, commandTimeout, connectTimeout, reconnectOnError } = base
    return new Cluster(store.cluster, {
      enableOfflineQueue: false,
      // A Cluster's commands go to several nodes, whose sockets coalesceTurn does not reach: ioredis
      // batches them per node instead (at the GC cost coalesce.ts describes; no Cluster is measured here).
      enableAutoPipelining: true,
      lazyConnect: true,
      clusterRetryStrategy: (times: number) => Math.min(100 * times, 1000),
      redisOptions: {
        password,
        tls,
        commandTimeout,
        connectTimeout,
        reconnectOnError,
        maxRetriesPerRequest: 1,
        autoResendUnfulfilledCommands: false,
      },
    }) as unknown as Redis
  }
  if (store.sentinels) {
    return new Redis({
      ...base,
      sentinels: store.sentinels,
      name: store.name,
      sentinelPassword: store.sentinelPass,
      // No failoverDetector: failover.ts watches the Sentinels and moves this client at the promotion
      // (ioredis's detector waits for +switch-master, seconds later), fencing writes from the moment a
      // failover begins, which the detector cannot tell.
    })
  }
  if (store.url) {
    // rediss:// turns TLS on by itself; store.tls adds a CA or relaxes verification.
    return new Redis(store.url, { ...base, password: base.password ?? undefined })
  }
  return new Redis({ ...base, host: store.host, port: store.port })
}

/** A new Redis client for the chosen driver, named `connectionName` (see instances.ts); the caller owns it and must quit it. */
export async function connectStore(store: StoreConfig, driver: StoreDriver, connectionName?: string): Promise<Redis> {
  if (driver === 'memory') {
    const { default: RedisMock } = await import('ioredis-mock')
    return new RedisMock() as unknown as Redis
  }
  const client = await newClient(store, connectionName)
  // Without a listener, an unreachable Redis prints ioredis's "Unhandled error event" on every retry.
  // The socket's own error is the reason to show: connect() rejects with "Connection is closed." only.
  let socketError: Error | undefined
  client.on('error', (err: Error) => (socketError ??= err))
  try {
    await client.connect()
    if (store.cluster) await client.ping()
  } catch (err) {
    client.disconnect()
    const reason = (socketError ?? (err as Error)).message
    throw brokerError('redisUnreachable', { store: describeStore(store), reason })
  }
  return client
}

/** Whether something answers PING at the configured Redis address within `ms` (for store.driver auto). */
export async function redisAnswers(store: StoreConfig, ms = 500): Promise<boolean> {
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

/**
 * Decides the driver for store.driver `auto`: Redis when it answers at host:port within about
 * half a second. A store.url, Sentinel or Cluster setting means Redis, without the fallback.
 */
export async function resolveDriver(store: StoreConfig): Promise<StoreDriver> {
  if (store.driver !== 'auto') return store.driver
  if (store.url || store.sentinels || store.cluster) return 'redis'
  return (await redisAnswers(store)) ? 'redis' : 'memory'
}

/**
 * How many replicas must acknowledge each write (store.replicas): as configured, else 1 when the
 * store is Sentinel-managed and its master has a replica now (a failover then keeps every flow
 * the broker answered for), else 0.
 */
export async function replicasToWait(store: StoreConfig, redis: Redis, driver: StoreDriver): Promise<number> {
  if (store.replicas !== undefined) return store.replicas
  if (driver !== 'redis' || !store.sentinels) return 0
  const info = await redis.info('replication').catch(() => '')
  const connected = Number(/^connected_slaves:(\d+)/m.exec(info)?.[1] ?? 0)
  return connected > 0 ? 1 : 0
}
