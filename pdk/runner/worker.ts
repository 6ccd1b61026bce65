/**
 * Kong's worker start, before the first request a Lua VM serves (kong/init.lua `init_worker`,
 * runloop/plugins_iterator.lua): each plugin's `init_worker()` in PRIORITY order, then `configure(configs)`
 * once per plugin name with the configs of all its instances. A failure is logged as Kong logs it and
 * requests go on, each with Kong's alert about the earlier failure.
 */
import { formatLine } from '../kit/log/line.js'
import type { HandlerName, PluginHandler, Scene } from '../kit/private/handler.js'

/** One handler the worker start ran: the plugin, which handler, and the error it raised. */
export interface WorkerStep {
  plugin: PluginHandler
  handler: 'init_worker' | 'configure'
  error?: string
}

/**
 * Runs the worker start of each plugin's worker (its Lua VM) that has not had one; `begin` is told before each
 * handler runs (its calls are recorded by the scene's recorder). The steps in the order they ran.
 */
export async function startWorkers(
  plugins: readonly PluginHandler[],
  scene: Scene,
  begin: (plugin: PluginHandler, handler: WorkerStep['handler']) => void,
): Promise<WorkerStep[]> {
  const { ctx } = scene
  const inWorker = plugins.filter((p) => p.worker !== undefined)
  const fresh = inWorker.filter((p) => !p.worker!.started)
  const steps: WorkerStep[] = []
  if (fresh.length > 0) {
    const saved = ctx.phase
    ctx.phase = 'init_worker'
    for (const p of fresh) p.worker!.started = true
    // Kong runs a plugin's init_worker and configure once, whatever the number of its instances
    const once = fresh.filter((p, i) => fresh.findIndex((x) => x.name === p.name) === i)
    for (const p of once.filter((x) => x.phases.has('init_worker'))) {
      const error = await run(p, 'init_worker', scene, begin)
      steps.push({ plugin: p, handler: 'init_worker', ...(error !== undefined ? { error } : {}) })
      if (error === undefined) continue
      const message = `failed to execute the "init_worker" handler for plugin "${p.name}": ${error}`
      p.worker!.errors.push(message)
      ctx.logs.push({
        level: 'crit',
        line: formatLine(
          ctx,
          'crit',
          `worker initialization error: ${message}; this node must be restarted`,
          'init.lua:0',
        ),
      })
    }
    for (const p of once.filter((x) => x.phases.has('configure'))) {
      const error = await run(p, 'configure', scene, begin)
      steps.push({ plugin: p, handler: 'configure', ...(error !== undefined ? { error } : {}) })
      if (error !== undefined)
        ctx.logs.push({
          level: 'error',
          line: formatLine(ctx, 'error', `failed to execute plugin '${p.name}:configure (${error})`, 'init.lua:0'),
        })
    }
    ctx.phase = saved
  }
  const errors = [...new Set(inWorker.flatMap((p) => p.worker!.errors))]
  if (errors.length > 0)
    ctx.logs.push({
      level: 'alert',
      line: formatLine(
        ctx,
        'alert',
        `unsafe request processing due to earlier initialization errors; this node must be restarted (${errors.join(', ')})`,
        'init.lua:0',
      ),
    })
  return steps
}

async function run(
  p: PluginHandler,
  handler: HandlerName & WorkerStep['handler'],
  scene: Scene,
  begin: (plugin: PluginHandler, handler: WorkerStep['handler']) => void,
): Promise<string | undefined> {
  scene.ctx.plugin = { name: p.name, id: p.id, config: p.config }
  try {
    begin(p, handler)
    return (await p.run(handler, scene)).failed
  } finally {
    scene.ctx.plugin = undefined
  }
}
