import type { Redis } from 'ioredis'
import { resolve } from 'node:path'
import { FlowEvents } from './events.js'
import { createLogger } from '../log.js'
import { type StoreDriver, connectStore, replicasToWait } from './store/connect.js'
import { watchFailovers } from './store/failover.js'
import { bridgeEvents } from './store/events-bridge.js'
import { FlowStore } from './store/flow-store.js'
import { MemoryLedger } from './store/memory-ledger.js'
import { Sealer } from './store/seal.js'
import type { BrokerDeps, ResolvedConfig } from './deps.js'
import { PluginRegistry } from './endpoints/plugins.js'
import { compilePolicy, setProviderPolicy } from './outbound/policy.js'

export interface Broker extends BrokerDeps {
  readonly driver: StoreDriver
  /** Quits the store connection. */
  close(): Promise<void>
}

/** Connects the store and wires the services' dependencies for one process. */
export async function createBroker(
  config: ResolvedConfig,
  driver: StoreDriver,
  opts: { redis?: Redis; cwd?: string; connectionName?: string } = {},
): Promise<Broker> {
  const redis = opts.redis ?? (await connectStore(config.store, driver, opts.connectionName))
  const log = createLogger(config.log.level)
  // Every provider request of this process, and /store's checks, go by this deployment's policy.
  setProviderPolicy(compilePolicy(config))
  const pluginsDir = config.plugins.dir ? resolve(opts.cwd ?? process.cwd(), config.plugins.dir) : undefined
  const secrets = storeSecrets(config)
  // The embedded store neither expires nor bounds what it keeps by itself: the ledger does both.
  const ledger = driver === 'memory' ? new MemoryLedger(redis, config.store.memoryLimit * 1024 * 1024) : undefined
  // On Sentinel, no write is acknowledged while a failover is under way (a flow the old master took is lost).
  const failovers =
    driver === 'redis' && config.store.sentinels ? await watchFailovers(config.store, redis, log) : undefined
  const store = new FlowStore(redis, {
    expireSeconds: config.store.expire,
    callbackWaitSeconds: config.store.callbackWait,
    prefix: config.store.prefix,
    secrets,
    ledger,
    replicas: await replicasToWait(config.store, redis, driver),
    // Within the command's own timeout (store.timeout), so a lagging replica is told apart from a silent Redis.
    waitMs: Math.floor((config.store.timeout * 3) / 4),
    shortfall: config.store.replicaShortfall,
    warn: (message) => log.warn(message),
    info: (message) => log.info(message),
    fence: failovers,
  })
  const events = new FlowEvents()
  // Several workers or instances share a real Redis: every one of them sees every flow's events.
  const unbridge =
    driver === 'redis' ? await bridgeEvents(events, redis, store.keys.events(), new Sealer(secrets)) : undefined
  return {
    config,
    driver,
    log,
    store,
    plugins: new PluginRegistry(pluginsDir),
    events,
    async close() {
      await unbridge?.()
      await failovers?.close()
      ledger?.close()
      if (opts.redis) return
      await redis.quit().catch(() => redis.disconnect())
    },
  }
}

/**
 * The secrets that name and seal the store's keys: `store.keys` when set (the first seals, all
 * open, so a deployment rotates by putting a new key first), else session.secret.
 */
export function storeSecrets(config: ResolvedConfig): readonly string[] {
  const keys = config.store.keys
  return keys && keys.length > 0 ? keys : [config.session.secret]
}
