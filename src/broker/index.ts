import type { Redis } from 'ioredis'
import { resolve } from 'node:path'
import { FlowEvents } from './events.js'
import { createLogger } from '../log.js'
import { type StoreDriver, connectStore } from './redis/connect.js'
import { bridgeEvents } from './redis/events-bridge.js'
import { FlowStore } from './redis/flow-store.js'
import type { BrokerDeps, ResolvedConfig } from './deps.js'
import { PluginRegistry } from './flows/plugins.js'

export interface Broker extends BrokerDeps {
  readonly driver: StoreDriver
  /** Quits the store connection. */
  close(): Promise<void>
}

/** Connects the store and wires the services' dependencies for one process. */
export async function createBroker(config: ResolvedConfig, driver: StoreDriver, opts: { redis?: Redis; cwd?: string } = {}): Promise<Broker> {
  const redis = opts.redis ?? (await connectStore(config.store, driver))
  const log = createLogger(config.log.level)
  const pluginsDir = config.plugins.dir ? resolve(opts.cwd ?? process.cwd(), config.plugins.dir) : undefined
  const store = new FlowStore(redis, config.store.expire, config.store.prefix)
  const events = new FlowEvents()
  // Several workers or instances share a real Redis: every one of them sees every flow's events.
  const unbridge = driver === 'redis' ? await bridgeEvents(events, redis, store.keys.events()) : undefined
  return {
    config,
    driver,
    log,
    store,
    plugins: new PluginRegistry(pluginsDir),
    events,
    async close() {
      await unbridge?.()
      if (opts.redis) return
      await redis.quit().catch(() => redis.disconnect())
    },
  }
}
