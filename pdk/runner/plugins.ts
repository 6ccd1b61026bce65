/** The two kinds of plugins a fixture lists: kong-js-pdk modules and call scripts. */
import { isAbsolute, resolve } from 'node:path'
import type { Facade } from '../facade.js'
import { FixtureError, type LoadedFixture, type PluginSpec, type ScriptCall } from '../fixture.js'
import { loadPluginModule, phaseMethod, type PluginModule } from '../loader.js'
import type { Phase } from '../phases.js'
import { stableUuid } from './setup.js'

export interface ModulePlugin {
  kind: 'module'
  index: number
  name: string
  id: string
  config: Record<string, unknown>
  module: PluginModule
}

export interface ScriptPlugin {
  kind: 'script'
  index: number
  name: string
  id: string
  config: Record<string, unknown>
  phases: Partial<Record<Phase, ScriptCall[]>>
}

export type RunnablePlugin = ModulePlugin | ScriptPlugin

/** Resolves and imports the fixture's plugins; a module that fails to load is a fixture error. */
export async function preparePlugins(loaded: LoadedFixture): Promise<RunnablePlugin[]> {
  return Promise.all(
    loaded.fixture.plugins.map(async (spec: PluginSpec, index): Promise<RunnablePlugin> => {
      const base = {
        index,
        name: spec.name,
        id: spec.id ?? stableUuid(`plugin:${spec.name}:${index}`),
        config: spec.config ?? {},
      }
      if (spec.module === undefined) return { kind: 'script', ...base, phases: spec.phases ?? {} }
      const abs = isAbsolute(spec.module) ? spec.module : resolve(loaded.dir, spec.module)
      try {
        return { kind: 'module', ...base, module: await loadPluginModule(abs) }
      } catch (e) {
        const reason =
          (e as NodeJS.ErrnoException).code === 'ERR_MODULE_NOT_FOUND'
            ? `cannot find module ${abs}`
            : (e as Error).message
        throw new FixtureError(loaded.file, `$.plugins[${index}].module`, reason)
      }
    }),
  )
}

/** Whether a plugin does anything in a phase. */
export function handles(plugin: RunnablePlugin, instance: Record<string, unknown> | undefined, phase: Phase): boolean {
  if (plugin.kind === 'script') return (plugin.phases[phase]?.length ?? 0) > 0
  return instance !== undefined && phaseMethod(instance, phase) !== undefined
}

/** Runs a module plugin's phase method with the kong facade. */
export async function runModulePhase(instance: Record<string, unknown>, phase: Phase, kong: Facade): Promise<void> {
  await phaseMethod(instance, phase)!(kong)
}
