/** Loads plugin modules written to the kong-js-pdk contract: .js (CommonJS or ESM) and .ts. */
import { pathToFileURL } from 'node:url'

/** What a kong-js-pdk plugin module exports. */
export interface PluginModule {
  Plugin: new (config: Record<string, unknown>) => Record<string, unknown>
  Schema?: unknown
  Version?: string
  Priority?: number
  Name?: string
}

const cache = new Map<string, Promise<PluginModule>>()

async function importAny(abs: string): Promise<Record<string, unknown>> {
  if (/\.[cm]?ts$/.test(abs)) {
    const { tsImport } = await import('tsx/esm/api')
    return (await tsImport(pathToFileURL(abs).href, import.meta.url)) as Record<string, unknown>
  }
  return (await import(pathToFileURL(abs).href)) as Record<string, unknown>
}

/** Imports a plugin module once; throws with the reason when it does not export a Plugin class. */
export function loadPluginModule(abs: string): Promise<PluginModule> {
  let hit = cache.get(abs)
  if (!hit) {
    hit = importAny(abs).then((ns) => {
      // CommonJS modules arrive as `default` (module.exports); ESM ones as named exports
      // (module.exports itself: Node finds only some of its keys as named exports, e.g. not `Name: 'x'`)
      const def = ns.default as Record<string, unknown> | undefined
      const mod = (def && typeof def.Plugin === 'function' ? def : ns) as Record<string, unknown>
      if (typeof mod.Plugin !== 'function')
        throw new Error('does not export a Plugin class (kong-js-pdk contract: Plugin, Schema, Version, Priority)')
      return mod as unknown as PluginModule
    })
    cache.set(abs, hit)
    hit.catch(() => cache.delete(abs))
  }
  return hit
}

/** The phases kong-js-pdk's plugin server runs a plugin in (lib/mod.js): Kong calls no others. */
export const SERVER_PHASES: readonly string[] = ['certificate', 'rewrite', 'log', 'access', 'preread', 'response']

/** The phases a module takes part in, found as kong-js-pdk does: methods on the Plugin prototype. */
export function serverPhases(mod: PluginModule): ReadonlySet<string> {
  const proto = mod.Plugin.prototype as Record<string, unknown>
  return new Set(SERVER_PHASES.filter((p) => typeof proto[p] === 'function'))
}

/** The name the plugin server registers a module under: its `Name`, else its file's name, lowercased. */
export const serverName = (mod: PluginModule, fileName: string): string => (mod.Name ?? fileName).toLowerCase()

/** The phase method of a plugin instance under its snake_case or camelCase name. */
export function phaseMethod(
  instance: Record<string, unknown>,
  phase: string,
): ((kong: unknown) => unknown) | undefined {
  const camel = phase.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase())
  const fn = instance[phase] ?? instance[camel]
  return typeof fn === 'function' ? (fn as (kong: unknown) => unknown).bind(instance) : undefined
}
