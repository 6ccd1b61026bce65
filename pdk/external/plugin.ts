/** A kong-js-pdk plugin as Kong knows an external plugin: what GetPluginInfo says and StartInstance is sent. */
import type { PluginHandler } from '../kit/private/handler.js'

/** A loaded kong-js-pdk plugin of a fixture, as both JS faces run it (in process, or on a plugin server). */
export interface ExternalPlugin {
  /** Its slot in the fixture. */
  index: number
  /** The fixture's name for it. */
  name: string
  id: string
  config: Record<string, unknown>
  /** The module file. */
  path: string
  /** The file name the plugin server finds it under (the fixture's name stands for the file). */
  fileName: string
  /** The name the plugin server registers it under (its `Name`, else its file's), and names it by in its log. */
  serverName: string
  priority: number
  version?: string
  /** The phases the plugin server runs it in (methods of its Plugin class). */
  phases: ReadonlySet<string>
  /** The JSON config Kong sends StartInstance; the plugin is constructed from it in process too. */
  kongConfig: string
}

/** What a handler of the plugin says of it, on either JS face. */
export const handlerFields = (p: ExternalPlugin): Omit<PluginHandler, 'run'> => ({
  index: p.index,
  name: p.name,
  id: p.id,
  config: p.config,
  priority: p.priority,
  ...(p.version !== undefined ? { version: p.version } : {}),
  phases: p.phases,
})
