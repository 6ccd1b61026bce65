/** The two kinds of plugins a fixture lists: kong-js-pdk modules and call scripts. */
import { basename, extname, isAbsolute, relative, resolve } from 'node:path'
import type { LuaOptions, LuaPlugin } from '../lua/plugin.js'
import type { Context } from '../kit/context.js'
import { createFacade, openSession, type Facade } from '../js/facade.js'
import { FixtureError, type LoadedFixture, type PluginSpec, type ScriptCall } from '../fixture/index.js'
import type { KitTree } from '../kit/index.js'
import { loadPluginModule, serverName, serverPhases, type PluginModule } from '../js/loader.js'
import type { Phase } from '../kit/private/phases.js'
import { kongConfig } from '../external/config.js'
import {
  PluginServers,
  type PluginServerOptions,
  type RemotePlugin,
  type ServedPlugin,
} from '../plugin-server/index.js'
import { rpcLog, serverLine, unhandledText } from '../external/log.js'
import type { Recorder } from '../kit/private/trace.js'
import { placeText, syntaxErrorPlace } from '../../util/source-position.js'
import { stableUuid } from '../fixture/setup.js'
import { watchdog } from './watchdog.js'

export interface ModulePlugin {
  kind: 'module'
  index: number
  name: string
  id: string
  config: Record<string, unknown>
  module: PluginModule
  /** The module file. */
  path: string
  /** The name the plugin server registers it under (and names it by in its log). */
  serverName: string
  /** The phases the plugin server runs it in. */
  phases: ReadonlySet<string>
  /** The JSON config Kong sends StartInstance; the plugin is constructed from it in process too. */
  kongConfig: string
  /** Run on a plugin server rather than in process. */
  remote: boolean
}

export interface ScriptPlugin {
  kind: 'script'
  index: number
  name: string
  id: string
  config: Record<string, unknown>
  phases: Partial<Record<Phase, ScriptCall[]>>
}

export type { LuaPlugin } from '../lua/plugin.js'

export type RunnablePlugin = ModulePlugin | ScriptPlugin | LuaPlugin

/** How module plugins run: in process, or (all, or those whose fixture says so) on a plugin server. */
export interface ModuleOptions {
  /** Every module plugin on a plugin server (`--plugin-server`). */
  all?: boolean
  /** The servers of this run; needed when any plugin runs remote. */
  servers?: PluginServers
  /** Milliseconds a phase may wait for the plugin before Kong gives up on it (a hung event). */
  timeoutMs?: number
  /** Lua plugins: `--lua-path` roots, heap limit. */
  lua?: LuaOptions
}

// a Lua plugin's module is a handler.lua or its folder; the VM is imported only for those
const LUA_MODULE = /\.lua$|(^|[/\\])kong[/\\]plugins[/\\][^/\\]+[/\\]?$/

/** Resolves and imports the fixture's plugins; a module that fails to load is a fixture error. */
export async function preparePlugins(loaded: LoadedFixture, options: ModuleOptions = {}): Promise<RunnablePlugin[]> {
  const specs = loaded.fixture.plugins
  const isLua = (spec: PluginSpec) => spec.module !== undefined && LUA_MODULE.test(spec.module)
  const luaEntries = specs.flatMap((spec, index) =>
    isLua(spec) ? [{ spec, index, id: spec.id ?? stableUuid(`plugin:${luaName(spec)}:${index}`) }] : [],
  )
  const lua = luaEntries.length
    ? await (await import('../lua/plugin.js')).prepareLuaPlugins(loaded, luaEntries, options.lua)
    : []
  return Promise.all(
    specs.map(async (spec: PluginSpec, index): Promise<RunnablePlugin> => {
      if (isLua(spec)) return lua.find((p) => p.index === index)!
      const name = spec.name ?? basename(spec.module ?? 'plugin', extname(spec.module ?? ''))
      const base = {
        index,
        name,
        id: spec.id ?? stableUuid(`plugin:${name}:${index}`),
        config: spec.config ?? {},
      }
      if (spec.module === undefined) return { kind: 'script', ...base, phases: spec.phases ?? {} }
      const abs = isAbsolute(spec.module) ? spec.module : resolve(loaded.dir, spec.module)
      let module: PluginModule
      try {
        module = await loadPluginModule(abs)
      } catch (e) {
        const place = await syntaxErrorPlace(e, abs)
        const reason =
          (e as NodeJS.ErrnoException).code === 'ERR_MODULE_NOT_FOUND'
            ? `cannot find module ${abs}`
            : place
              ? `${placeText(shownPath(place.file), place)}: ${(e as Error).message}`
              : (e as Error).message
        throw new FixtureError(loaded.file, `$.plugins[${index}].module`, reason)
      }
      // the plugin server names a module by its Name or its file; the fixture's name stands for the file
      const registered = serverName(module, fileNameOf(name, abs))
      return {
        kind: 'module',
        ...base,
        module,
        path: abs,
        serverName: registered,
        phases: serverPhases(module),
        kongConfig: kongConfig(registered, base.id, module.Schema, base.config, index + 1),
        remote: spec.plugin_server === true || options.all === true,
      }
    }),
  )
}

/** A path as the CLI shows it: relative to the current folder when under it, else as it is. */
function shownPath(file: string): string {
  const rel = relative(process.cwd(), file)
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : file
}

/** A Lua plugin's name as its folder gives it (the id of an unnamed entry derives from it). */
const luaName = (spec: PluginSpec): string =>
  spec.name ?? basename(spec.module!.replace(/[/\\]+$/, '').replace(/[/\\]handler\.lua$/, ''))

/** Whether a plugin does anything in a phase. */
export function handles(plugin: RunnablePlugin, phase: Phase): boolean {
  if (plugin.kind === 'script') return (plugin.phases[phase]?.length ?? 0) > 0
  return plugin.phases.has(phase)
}

/** Kong's PRIORITY (kong-js-pdk's `Priority`); call scripts have none (0). */
export function priorityOf(plugin: RunnablePlugin): number {
  if (plugin.kind === 'lua') return plugin.priority
  if (plugin.kind === 'module') return plugin.module.Priority ?? 0
  return 0
}

/** The plugins in the order Kong runs them: higher PRIORITY first, the fixture's order among equals. */
export function kongOrder(plugins: readonly RunnablePlugin[]): RunnablePlugin[] {
  return [...plugins].sort((a, b) => priorityOf(b) - priorityOf(a) || a.index - b.index)
}

/** Frees what the plugins hold (the Lua VMs). */
export function closePlugins(plugins: readonly RunnablePlugin[]): void {
  const runtimes = new Set(plugins.flatMap((p) => (p.kind === 'lua' ? [p.runtime] : [])))
  for (const r of runtimes) r.close()
}

/** How a plugin server serves a module plugin: its file is placed under the fixture's plugin name. */
export const servedPlugin = (p: ModulePlugin): ServedPlugin => ({
  module: p.path,
  fileName: fileNameOf(p.name, p.path),
  name: p.serverName,
})

const fileNameOf = (name: string, path: string): string =>
  name.replace(/[^A-Za-z0-9_-]/g, '_') || basename(path, extname(path))

// the plugin server numbers instances from 0; so does the in-process stand-in, per module
const instanceIds = new WeakMap<PluginModule, number>()
// Kong keeps one instance per plugin configuration for every request (get_instance_id): so does
// a prepared plugin replayed again (the bench, the dashboard)
const instances = new WeakMap<ModulePlugin, LocalInstance>()

interface LocalInstance {
  object: Record<string, unknown>
  iid: number
}

/** The plugin's instance, built on first use; a constructor that throws fails the phase, as StartInstance's error does in Kong. */
function instanceOf(p: ModulePlugin): LocalInstance {
  let instance = instances.get(p)
  if (!instance) {
    const iid = instanceIds.get(p.module) ?? 0
    instanceIds.set(p.module, iid + 1)
    // kong-js-pdk builds the instance from the JSON config Kong sends (server.js StartInstance)
    instances.set(p, (instance = { object: new p.module.Plugin(JSON.parse(p.kongConfig)), iid }))
  }
  return instance
}

/** The module plugins of one scenario: their instances and the `kong` object they are given. */
export class ScenarioModules {
  private readonly remote: Array<RemotePlugin | undefined> = []
  readonly kong: Facade | undefined

  constructor(
    private readonly plugins: RunnablePlugin[],
    private readonly kit: KitTree,
    private readonly ctx: Context,
    private readonly record: () => Recorder | undefined,
    private readonly options: ModuleOptions,
  ) {
    for (const p of plugins) {
      if (p.kind !== 'module') continue
      if (p.remote) {
        if (!options.servers) throw new Error('plugin_server needs the run to start plugin servers')
        this.remote[p.index] = options.servers.remote(p, servedPlugin(p), p.kongConfig)
        continue
      }
    }
    if (plugins.some((p) => p.kind === 'module' && !p.remote)) this.kong = createFacade(kit, ctx, record)
  }

  /**
   * Runs one module plugin's phase as Kong drives it. Returns the plugin server's complaint when
   * the plugin threw (Kong goes on); throws Kong's error when a kit call raised (the phase fails).
   */
  async run(plugin: ModulePlugin, phase: Phase): Promise<string | undefined> {
    const remote = this.remote[plugin.index]
    if (remote) return remote.handle(phase, this.kit, this.ctx, this.record())
    return this.runLocal(plugin, instanceOf(plugin), phase)
  }

  private async runLocal(plugin: ModulePlugin, instance: LocalInstance, phase: Phase): Promise<string | undefined> {
    const session = openSession(this.kong!)
    let result: unknown
    try {
      result = (instance.object[phase] as (kong: unknown) => unknown).call(instance.object, this.kong)
    } catch (e) {
      result = Promise.reject(e)
    }
    let thrown: { e: unknown } | undefined
    const finished = Promise.resolve(result).then(
      () => undefined,
      (e: unknown) => void (thrown = { e }),
    )
    const timeoutMs = this.options.timeoutMs ?? 10_000
    let hung = false
    const watch = watchdog.add(timeoutMs, () => {
      hung = true
      session.end()
    })
    await Promise.race([finished, session.done])
    watchdog.remove(watch)
    if (session.raised !== undefined) throw new Error(session.raised)
    if (hung) {
      rpcLog(this.ctx, 'err', `no data (${phase} got no answer within ${timeoutMs} ms)`)
      return undefined
    }
    if (!thrown || session.ended) return undefined
    const text = unhandledText(plugin.serverName, phase, instance.iid, thrown.e)
    this.ctx.logs.push(serverLine(plugin.serverName, process.pid, text))
    return text
  }
}

/** Starts the plugin servers that `plugins` need (none: undefined); throws StartError when one cannot start. */
export async function startPluginServers(
  plugins: readonly RunnablePlugin[],
  options: PluginServerOptions,
): Promise<PluginServers | undefined> {
  const remote = plugins.filter((p): p is ModulePlugin => p.kind === 'module' && p.remote)
  if (remote.length === 0) return undefined
  const servers = new PluginServers(options)
  try {
    await servers.prepare(remote.map(servedPlugin))
  } catch (e) {
    await servers.close()
    throw e
  }
  return servers
}
