/**
 * A kong-js-pdk plugin run in process as a plugin handler: its instance built from the config Kong
 * sends, its phase method given the `kong` object (facade.ts), driven as Kong drives the plugin server.
 */
import { handlerFields, type ExternalPlugin } from '../external/plugin.js'
import { RAN, type HandlerOutcome, type PluginHandler, type Scene } from '../kit/private/handler.js'
import { errorMessage } from '../kit/private/trace.js'
import { rpcLog, serverLine, unhandledText } from '../external/log.js'
import { createFacade, openSession, type Facade } from './facade.js'
import type { PluginModule } from './loader.js'
import { watchdog } from './watchdog.js'

// the plugin server numbers instances from 0; so does the in-process stand-in, per module
const instanceIds = new WeakMap<PluginModule, number>()

// one `kong` object per request, shared by its module plugins, as the plugin server hands each the same PDK
const FACADE = Symbol('kong facade')
const facadeOf = (scene: Scene): Facade => {
  let kong = scene.kept.get(FACADE) as Facade | undefined
  if (!kong) scene.kept.set(FACADE, (kong = createFacade(scene.kit, scene.ctx, () => scene.record)))
  return kong
}

interface Instance {
  object: Record<string, unknown>
  iid: number
}

/** A module plugin in process as a handler. */
export function jsHandler(plugin: ExternalPlugin, module: PluginModule): PluginHandler {
  // Kong keeps one instance per plugin configuration for every request (get_instance_id): so does
  // a prepared plugin replayed again (the bench, the dashboard)
  let instance: Instance | undefined
  // built on first use; a constructor that throws fails the phase, as StartInstance's error does in Kong
  const instanceOf = (): Instance => {
    if (!instance) {
      const iid = instanceIds.get(module) ?? 0
      instanceIds.set(module, iid + 1)
      // kong-js-pdk builds the instance from the JSON config Kong sends (server.js StartInstance)
      instance = { object: new module.Plugin(JSON.parse(plugin.kongConfig)), iid }
    }
    return instance
  }
  return {
    ...handlerFields(plugin),
    run: async (handler, scene) => {
      if (handler === 'configure') return RAN
      let built: Instance
      try {
        built = instanceOf()
      } catch (e) {
        return { failed: errorMessage(e) }
      }
      return runPhase(plugin, built, handler, scene)
    },
  }
}

/**
 * Runs one phase as Kong drives the plugin: the plugin's own exception is logged by its server and
 * Kong goes on; a kit call that raised fails the phase; a phase that never ends times out.
 */
async function runPhase(
  plugin: ExternalPlugin,
  instance: Instance,
  phase: string,
  scene: Scene,
): Promise<HandlerOutcome> {
  const { ctx } = scene
  const kong = facadeOf(scene)
  const session = openSession(kong)
  let result: unknown
  try {
    result = (instance.object[phase] as (kong: unknown) => unknown).call(instance.object, kong)
  } catch (e) {
    result = Promise.reject(e)
  }
  let thrown: { e: unknown } | undefined
  const finished = Promise.resolve(result).then(
    () => undefined,
    (e: unknown) => void (thrown = { e }),
  )
  let hung = false
  const watch = watchdog.add(scene.timeoutMs, () => {
    hung = true
    session.end()
  })
  await Promise.race([finished, session.done])
  watchdog.remove(watch)
  if (session.raised !== undefined) return { failed: session.raised }
  if (hung) {
    rpcLog(ctx, 'err', `no data (${phase} got no answer within ${scene.timeoutMs} ms)`)
    return RAN
  }
  if (!thrown || session.ended) return RAN
  const text = unhandledText(plugin.serverName, phase, instance.iid, thrown.e)
  ctx.logs.push(serverLine(plugin.serverName, process.pid, text))
  return { logged: text }
}
