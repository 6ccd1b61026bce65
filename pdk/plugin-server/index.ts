/**
 * Module plugins run by a real plugin server, with this process playing Kong 3.x's side of the
 * protocol (`kong/runloop/plugin_servers/*.lua`): GetPluginInfo, StartInstance with Kong's config,
 * HandleEvent and the Step answers to each PDK call, CloseInstance.
 */
import { ServerProcess, StartError, type ServedPlugin } from './process.js'
import { RemotePlugin } from './remote.js'

export { StartError, type ServedPlugin } from './process.js'
export { KitRaised, RemotePlugin } from './remote.js'

const START_MS = 30_000

export interface PluginServerOptions {
  /** A shell command line of another plugin server; the kong-pdk package's kong-js-pluginserver when absent. */
  command?: string
  /** Milliseconds allowed for each answer (a hung event), and for starting when more than 30 s. */
  timeoutMs: number
}

/** What GetPluginInfo says about the plugin. */
export interface PluginInfo {
  Name: string
  Version?: string
  Phases?: string[]
  Priority?: number
  Schema?: unknown
}

interface Group {
  plugins: ServedPlugin[]
  running?: Promise<ServerProcess>
}

/**
 * The plugin servers of a run. Plugins known up front share one server (a second one only when
 * two register the same name), since starting the kong-js-pluginserver costs seconds; a server
 * that died is started again on its next use, as Kong respawns it.
 */
export class PluginServers {
  private readonly groups: Group[] = []
  private readonly infos = new Map<string, PluginInfo>()
  private readonly remotes = new Map<object, RemotePlugin>()
  /** The plugins of the instances made so far: what `prepare` starts when given none. */
  private readonly wanted: ServedPlugin[] = []

  constructor(readonly options: PluginServerOptions) {}

  private groupOf(p: ServedPlugin): Group | undefined {
    return this.groups.find((g) => g.plugins.some((q) => q.module === p.module && q.fileName === p.fileName))
  }

  /**
   * Starts the servers for `plugins` (those of every instance made with `remote`, when not given) and checks
   * each is registered; throws StartError when not.
   */
  async prepare(plugins: readonly ServedPlugin[] = this.wanted): Promise<void> {
    const fresh: Group[] = []
    for (const p of plugins) {
      if (
        this.groupOf(p) ||
        fresh.some((g) => g.plugins.some((q) => q.module === p.module && q.fileName === p.fileName))
      )
        continue
      let g = fresh.find((x) => !x.plugins.some((q) => q.name === p.name))
      if (!g) fresh.push((g = { plugins: [] }))
      g.plugins.push(p)
    }
    this.groups.push(...fresh)
    await Promise.all(plugins.map((p) => this.server(p)))
  }

  /** The running server for `plugin`, started (or started again) when needed. */
  async server(plugin: ServedPlugin): Promise<ServerProcess> {
    let g = this.groupOf(plugin)
    if (!g) this.groups.push((g = { plugins: [plugin] }))
    if (g.running) {
      const s = await g.running.catch(() => undefined)
      if (s && !s.exited) return s
    }
    const group = g
    group.running = this.start(group.plugins)
    group.running.catch(() => (group.running = undefined))
    return group.running
  }

  private async start(plugins: ServedPlugin[]): Promise<ServerProcess> {
    // starting (ts-node, typescript) takes seconds on a busy machine: never less than START_MS
    const timeoutMs = Math.max(this.options.timeoutMs, START_MS)
    const proc = await ServerProcess.start({ plugins, command: this.options.command, timeoutMs })
    for (const p of plugins) {
      try {
        const conn = await proc.connection(timeoutMs)
        this.infos.set(p.name, (await conn.call('plugin.GetPluginInfo', [p.name], timeoutMs)) as PluginInfo)
      } catch (e) {
        proc.stop()
        throw new StartError(`the plugin server has no plugin "${p.name}": ${(e as Error).message}${proc.tail()}`)
      }
    }
    return proc
  }

  /** What GetPluginInfo answered for a plugin. */
  info(name: string): PluginInfo | undefined {
    return this.infos.get(name)
  }

  /** The plugin's instance on its server for this run: Kong keeps one per plugin configuration. */
  remote(key: object, plugin: ServedPlugin, config: string): RemotePlugin {
    let r = this.remotes.get(key)
    if (!r) {
      this.remotes.set(key, (r = new RemotePlugin(this, plugin, config)))
      this.wanted.push(plugin)
    }
    return r
  }

  /** CloseInstance for every instance, then stops every server. */
  async close(): Promise<void> {
    await Promise.all([...this.remotes.values()].map((r) => r.close()))
    this.remotes.clear()
    const all = await Promise.allSettled(this.groups.map((g) => g.running).filter((r) => r !== undefined))
    for (const s of all) if (s.status === 'fulfilled') s.value.stop()
    this.groups.length = 0
    this.wanted.length = 0
  }
}
