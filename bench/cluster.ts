import cluster from 'node:cluster'
import { Redis } from 'ioredis'

/**
 * The bench servers' worker model, as `broker serve` runs (cluster, SCHED_NONE): in the primary,
 * forks WORKERS workers, says 'ready' once each has, and stops them on SIGTERM; returns false
 * there. In a worker, or with WORKERS=0, returns true: the caller serves.
 */
export function isBenchWorker(): boolean {
  if (!cluster.isPrimary) return true
  const workers = Number(process.env.WORKERS ?? 1)
  // WORKERS=0: this process serves, with no cluster (bench/instructions.ts runs it under callgrind).
  if (workers === 0) return true
  cluster.schedulingPolicy = cluster.SCHED_NONE
  let ready = 0
  for (let i = 0; i < workers; i++) cluster.fork().on('message', () => ++ready === workers && process.send?.('ready'))
  process.on('SIGTERM', () => {
    for (const w of Object.values(cluster.workers ?? {})) w?.kill()
    process.exit(0)
  })
  return false
}

/** The bench servers' Redis connection (REDIS_PORT on loopback), connected: no offline queue, as the broker's. */
export async function benchRedis(): Promise<Redis> {
  const redis = new Redis({
    port: Number(process.env.REDIS_PORT),
    host: '127.0.0.1',
    enableOfflineQueue: false,
    lazyConnect: true,
  })
  await redis.connect()
  return redis
}
