/**
 * A fixture's plugins loaded, each by its face, into the one handler shape (kit/private/handler.ts): Lua
 * plugins by lua/, kong-js-pdk modules by js/ (in process) or plugin-server/ (on a real plugin server), call
 * scripts by script.ts. The runner sees only the handlers.
 */
import { basename, extname } from 'node:path'
import type { LuaOptions } from '../lua/plugin.js'
import type { LoadedFixture, PluginSpec } from '../fixture/index.js'
import type { PluginHandler } from '../kit/private/handler.js'
import { loadJsPlugin } from '../js/plugin.js'
import { jsHandler } from '../js/handler.js'
import type { PluginServers } from '../plugin-server/index.js'
import { remoteHandler } from '../plugin-server/handler.js'
import { stableUuid } from '../fixture/setup.js'
import { scriptHandler, type ScriptCaller } from './script.js'

export type { PluginHandler } from '../kit/private/handler.js'

/** How the fixture's plugins load: where module plugins run, the Lua options, and how call scripts call. */
export interface PrepareOptions {
  /** Every module plugin on a plugin server (`--plugin-server`). */
  all?: boolean
  /**
   * The run's plugin servers, for module plugins that run on one (`all`, or the entry's `plugin_server`):
   * they are registered here, and start with `servers.prepare()`.
   */
  servers?: PluginServers
  /** Lua plugins: `--lua-path` roots, heap limit. */
  lua?: LuaOptions
  /** Call scripts make their calls this way instead of on the kit (through the Lua face, to check it). */
  scriptsVia?: ScriptCaller
}

// a Lua plugin's module is a handler.lua or its folder; the VM is imported only for those
const LUA_MODULE = /\.lua$|(^|[/\\])kong[/\\]plugins[/\\][^/\\]+[/\\]?$/

/** Loads the fixture's plugins into handlers, in the fixture's order; one that fails to load is a fixture error. */
export async function preparePlugins(loaded: LoadedFixture, options: PrepareOptions = {}): Promise<PluginHandler[]> {
  const specs = loaded.fixture.plugins
  const isLua = (spec: PluginSpec) => spec.module !== undefined && LUA_MODULE.test(spec.module)
  const luaEntries = specs.flatMap((spec, index) =>
    isLua(spec) ? [{ spec, index, id: spec.id ?? stableUuid(`plugin:${luaName(spec)}:${index}`) }] : [],
  )
  const lua = luaEntries.length
    ? await (await import('../lua/plugin.js')).prepareLuaPlugins(loaded, luaEntries, options.lua)
    : []
  const fileName = basename(loaded.file)
  // every module loads before any handler is made, so a fixture that fails registers nothing on a plugin server
  const modules = await Promise.all(
    specs.map((spec, index) => {
      if (isLua(spec) || spec.module === undefined) return undefined
      return loadJsPlugin(loaded, { ...baseOf(spec, index), module: spec.module })
    }),
  ).catch((e: unknown) => {
    closePlugins(lua)
    throw e
  })
  return specs.map((spec, index): PluginHandler => {
    if (isLua(spec)) return lua.find((p) => p.index === index)!
    if (spec.module === undefined)
      return scriptHandler({ ...baseOf(spec, index), phases: spec.phases ?? {} }, fileName, options.scriptsVia)
    const { plugin, module } = modules[index]!
    if (spec.plugin_server !== true && options.all !== true) return jsHandler(plugin, module)
    if (!options.servers) throw new Error('plugin_server needs the run to start plugin servers')
    return remoteHandler(plugin, options.servers)
  })
}

/** An entry's slot, name (its file's when it has none), id and config. */
function baseOf(spec: PluginSpec, index: number) {
  const name = spec.name ?? basename(spec.module ?? 'plugin', extname(spec.module ?? ''))
  return { index, name, id: spec.id ?? stableUuid(`plugin:${name}:${index}`), config: spec.config ?? {} }
}

/** A Lua plugin's name as its folder gives it (the id of an unnamed entry derives from it). */
const luaName = (spec: PluginSpec): string =>
  spec.name ?? basename(spec.module!.replace(/[/\\]+$/, '').replace(/[/\\]handler\.lua$/, ''))

/** The plugins in the order Kong runs them: higher PRIORITY first, the fixture's order among equals. */
export function kongOrder(plugins: readonly PluginHandler[]): PluginHandler[] {
  return [...plugins].sort((a, b) => b.priority - a.priority || a.index - b.index)
}

/** Frees what the plugins hold (the Lua VMs). */
export function closePlugins(plugins: readonly PluginHandler[]): void {
  for (const p of plugins) p.close?.()
}
