/** The configuration Kong sends a plugin server's StartInstance, and so the one a plugin is built with. */
import { stableUuid } from '../fixture/setup.js'

/** The default workspace's id, which Kong adds to every plugin configuration. */
export const WORKSPACE_ID = stableUuid('workspace:default')

type FieldDef = { type?: string; default?: unknown; fields?: unknown[] }

/** Kong fills every field of the plugin's schema: the given value, the default, else null. */
function fill(fields: unknown, given: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...given }
  for (const entry of Array.isArray(fields) ? fields : []) {
    for (const [name, def] of Object.entries((entry ?? {}) as Record<string, FieldDef>)) {
      if (given[name] !== undefined) continue
      if (def?.default !== undefined) out[name] = structuredClone(def.default)
      else if (def?.type === 'record' && Array.isArray(def.fields)) out[name] = fill(def.fields, {})
      else out[name] = null
    }
  }
  return out
}

/**
 * What `get_plugin_config` (runloop/plugins_iterator.lua) hands the plugin, JSON-encoded for
 * StartInstance: schema fields filled, plus the plugin's id, workspace, cache key and sequence.
 */
export function kongConfig(
  pluginName: string,
  pluginId: string,
  schema: unknown,
  given: Record<string, unknown>,
  seq: number,
): string {
  const cfg = fill(schema, given)
  cfg.__plugin_id = pluginId
  cfg.__ws_id = WORKSPACE_ID
  cfg.__key__ = `plugins:${pluginName}:::::${WORKSPACE_ID}`
  cfg.__seq__ = seq
  return JSON.stringify(cfg)
}
