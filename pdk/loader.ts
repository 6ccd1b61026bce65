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
      const def = ns.default as Record<string, unknown> | undefined
      const mod = (typeof ns.Plugin === 'function' ? ns : def && typeof def.Plugin === 'function' ? def : ns) as Record<
        string,
        unknown
      >
      if (typeof mod.Plugin !== 'function')
        throw new Error('does not export a Plugin class (kong-js-pdk contract: Plugin, Schema, Version, Priority)')
      return mod as unknown as PluginModule
    })
    cache.set(abs, hit)
    hit.catch(() => cache.delete(abs))
  }
  return hit
}

/** The phase methods a plugin instance has: kong-js-pdk's list plus the filter phases. */
export function phaseMethod(
  instance: Record<string, unknown>,
  phase: string,
): ((kong: unknown) => unknown) | undefined {
  const camel = phase.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase())
  const fn = instance[phase] ?? instance[camel]
  return typeof fn === 'function' ? (fn as (kong: unknown) => unknown).bind(instance) : undefined
}
