import { type AddressInfo, createServer } from 'node:net'
import { resolve } from 'node:path'
import { loadConfig } from '../../config/load.js'
import type { ConfigInput } from '../../config/schema.js'
import { brokerError } from '../../errors/index.js'
import { assertPortFree } from '../port-free.js'
import { notice } from '../../log.js'
import {
  type StoreDriver,
  connectStore,
  describeStore,
  isMultiInstanceStore,
  resolveDriver,
} from '../../broker/store/connect.js'
import { checkOtherInstances, instanceName } from '../../broker/store/instances.js'
import type { ResolvedConfig } from '../../broker/deps.js'
import { resolveSecrets } from './secrets.js'

export interface ServeOptions {
  configFile?: string
  flags?: ConfigInput
  cwd?: string
}

/** Everything `serve` decided before forking a worker; `config.workers` is the number to run. */
export interface ServePlan {
  readonly config: ResolvedConfig
  readonly driver: StoreDriver
  readonly cwd: string
  readonly pidFile: string
  /** The public URL, `protocol://host`. */
  readonly url: string
  /** The store as the notices name it: `redis <where>` or `embedded`. */
  readonly storeLabel: string
  /** The name of the workers' Redis connections (instances.ts). */
  readonly connectionName?: string
}

/**
 * `--port 0`: a free port picked before the workers start, so that every worker listens on it and
 * the URLs the broker builds (host `localhost:0`, see loadConfig) name it. When no port can be had
 * here, port 0 stays and the workers report why they cannot listen.
 */
async function withFreePort(config: ResolvedConfig): Promise<ResolvedConfig> {
  const port = await new Promise<number>((done) => {
    const probe = createServer()
    probe.once('error', () => done(0))
    probe.listen(0, config.listen, () => {
      const { port } = probe.address() as AddressInfo
      probe.close(() => done(port))
    })
  })
  return port ? { ...config, port, host: config.host === 'localhost:0' ? `localhost:${port}` : config.host } : config
}

/** Loads and checks the config, picks the store driver (probing Redis), fills in secrets and a free port; notices on stderr say what was chosen for the user. */
export async function resolveServeConfig(opts: ServeOptions): Promise<ServePlan> {
  const cwd = opts.cwd ?? process.cwd()
  const { config: loaded } = await loadConfig({ file: opts.configFile, flags: opts.flags, cwd })
  await assertPortFree(loaded.listen, loaded.port)
  if (!loaded.session.secret && isMultiInstanceStore(loaded.store)) {
    // Any instance may take any step of a flow: they must all derive a flow's hash from its state alike.
    throw brokerError('sharedSecretsMissing', {
      missing: ['session.secret'],
      shared: loaded.store.cluster ? 'cluster' : 'sentinels',
    })
  }
  const driver = await resolveDriver(loaded.store)
  let workers = loaded.workers
  if (driver === 'memory') {
    if (loaded.store.driver === 'auto')
      notice(
        `no Redis answered at ${loaded.store.host}:${loaded.store.port}; using the embedded in-process store (flows live in this process only)`,
      )
    if (workers > 1) notice(`workers set to 1 (was ${workers}): the embedded store cannot be shared between processes`)
    workers = 1
  }
  const { config: resolved, generated } = resolveSecrets({ ...loaded, workers })
  let connectionName: string | undefined
  if (driver === 'redis') {
    const me = instanceName(resolved.store.prefix, resolved.session.secret, !loaded.session.secret)
    connectionName = me.name
    const probe = await connectStore(loaded.store, 'redis')
    try {
      // A Cluster spreads connections over nodes (and requires session.secret set): not checked.
      if (!loaded.store.cluster && !(await checkOtherInstances(probe, me, resolved.store.prefix)))
        notice(
          'this Redis does not allow CLIENT LIST: other broker instances sharing it cannot be checked for the same session.secret',
        )
    } finally {
      await probe.quit().catch(() => undefined)
      // A Sentinel client also holds connections to the sentinels: close everything, or the primary never exits.
      probe.disconnect()
    }
  }
  const config = resolved.port === 0 ? await withFreePort(resolved) : resolved
  if (generated.length)
    notice(
      `${generated.join(' and ')} not set: generated for this run; several broker instances need the same one set (BROKER_SESSION_SECRET)`,
    )
  return {
    config,
    driver,
    cwd,
    pidFile: resolve(cwd, config.pid.dir, '.broker.pid'),
    url: `${config.protocol}://${config.host}`,
    storeLabel: driver === 'redis' ? `redis ${describeStore(config.store)}` : 'embedded',
    connectionName,
  }
}
