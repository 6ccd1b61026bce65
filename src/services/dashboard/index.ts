import { loadConfig } from '../../config/load.js'
import { assertPortFree } from '../port-free.js'
import type { ConfigInput } from '../../config/schema.js'
import { brokerError } from '../../errors/index.js'
import { buildServer } from '../../broker/http/build.js'
import { resolveDriver } from '../../broker/store/connect.js'
import type { DashboardProps } from './types.js'
import { BrokerClient, normalizeBrokerUrl } from '../broker-client.js'
import { createBroker } from '../../broker/index.js'
import { resolveSecrets } from '../serve/secrets.js'
import { Walker } from '../walk/walker.js'
import { fixturesDir } from './fixtures-dir.js'
import { adminEventSource, checkAdmin } from './admin-source.js'
import { listFixtures, replayFixture } from './pdk.js'
import { openUrl } from './open-url.js'
import { localEventSource } from './source.js'

export interface DashboardOptions {
  configFile?: string
  /** Config overrides from flags, as `serve` takes them. */
  flags?: ConfigInput
  /** A running broker's URL: attach to it instead of starting one. */
  attach?: string
  /** The admin key for --attach (else admin.key of the config). */
  adminKey?: string
  /** Folder of PDK fixtures; undefined: fixtures/pdk here, else the package's own (fixturesDir). */
  fixtures?: string
  /** Where the package is installed, for its shipped fixtures. */
  packageRoot: string
  /** Whether stdin is a terminal; the dashboard needs one. */
  interactive: boolean
  cwd?: string
  /** Draws the dashboard until the user quits (the UI's renderDashboard: the service never imports the UI). */
  render: (props: DashboardProps) => Promise<void>
}

export interface DashboardResult {
  mode: 'embedded' | 'attached'
  url: string
}

/** `broker dashboard`: starts an embedded broker (or attaches to one) and shows the dashboard until q. */
export async function dashboard(opts: DashboardOptions): Promise<DashboardResult> {
  if (!opts.interactive) throw brokerError('dashboardNeedsTty')
  const cwd = opts.cwd ?? process.cwd()
  const fixtures = fixturesDir(opts.fixtures, cwd, opts.packageRoot)
  const common = {
    walker: (url: string) => new Walker(url),
    pdk: { dir: fixtures, list: () => listFixtures(fixtures), replay: replayFixture },
    openUrl: (url: string) => openUrl(url),
  }
  if (opts.attach) {
    const url = normalizeBrokerUrl(opts.attach)
    const key = opts.adminKey ?? (await loadConfig({ file: opts.configFile, cwd })).config.admin.key
    if (!key) throw brokerError('attachNeedsAdminKey')
    await checkAdmin(url, key)
    const source = adminEventSource(url, key)
    try {
      await opts.render({ ...common, mode: 'attached', source, broker: new BrokerClient(url) })
    } finally {
      source.close()
    }
    return { mode: 'attached', url }
  }

  // Log lines on stderr would tear through the full-screen drawing.
  const flags: ConfigInput = {
    ...opts.flags,
    log: { level: 'silent' },
    admin: { key: opts.adminKey ?? opts.flags?.admin?.key },
  }
  const { config: loaded } = await loadConfig({ file: opts.configFile, flags, cwd })
  await assertPortFree(loaded.listen, loaded.port)
  const driver = await resolveDriver(loaded.store)
  const { config } = resolveSecrets({ ...loaded, workers: 1 })
  const broker = await createBroker(config, driver, { cwd })
  const source = localEventSource(broker.events)
  const app = await buildServer(broker)
  try {
    await app.listen({ port: config.port, host: config.listen }).catch((err: Error & { code?: string }) => {
      throw brokerError('dashboardCannotListen', {
        listen: config.listen,
        port: config.port,
        reason: err.code ?? err.message,
      })
    })
    const url = `${config.protocol}://${config.host}`
    const props: DashboardProps = {
      ...common,
      mode: 'embedded',
      detail: `store: ${driver === 'redis' ? `redis ${config.store.host}:${config.store.port}` : 'embedded'}`,
      source,
      broker: new BrokerClient(url),
    }
    await opts.render(props)
    return { mode: 'embedded', url }
  } finally {
    source.close()
    await app.close()
    await broker.close()
  }
}
