/**
 * A kong-js-pdk plugin on a real plugin server as a plugin handler, as Kong's plugin_servers/plugin.lua
 * builds one: each phase it has is a HandleEvent on its instance (remote.ts).
 */
import { handlerFields, type ExternalPlugin } from '../external/plugin.js'
import { RAN, type PluginHandler } from '../kit/private/handler.js'
import type { PluginServers } from './index.js'
import { KitRaised } from './remote.js'
import type { ServedPlugin } from './process.js'

/** How a plugin server serves the plugin: its file placed under the fixture's plugin name. */
export const servedPlugin = (p: ExternalPlugin): ServedPlugin => ({
  module: p.path,
  fileName: p.fileName,
  name: p.serverName,
})

/** The plugin on `servers` (which start it with the others of the run, at `prepare`) as a handler. */
export function remoteHandler(plugin: ExternalPlugin, servers: PluginServers): PluginHandler {
  const remote = servers.remote(plugin, servedPlugin(plugin), plugin.kongConfig)
  return {
    ...handlerFields(plugin),
    run: async (handler, { kit, ctx, record }) => {
      if (handler === 'configure') return RAN
      try {
        // the plugin server's complaint when the plugin threw: Kong logs it and goes on
        const logged = await remote.handle(handler, kit, ctx, record)
        return logged === undefined ? RAN : { logged }
      } catch (e) {
        // a kit call raised in Kong: the phase fails
        if (e instanceof KitRaised) return { failed: e.message }
        throw e
      }
    },
  }
}
