/**
 * Kong's worker start, before the first request a Lua VM serves (kong/init.lua `init_worker`,
 * runloop/plugins_iterator.lua): each plugin's `init_worker()` in PRIORITY order, then `configure(configs)`
 * once per plugin name with the configs of all its instances. A failure is logged as Kong logs it and
 * requests go on, each with Kong's alert about the earlier failure.
 */
import type { Context } from '../kit/context.js'
import type { KitTree } from '../kit/index.js'
import { formatLine } from '../kit/log/line.js'
import type { Recorder } from '../kit/private/trace.js'
import type { LuaPlugin } from '../lua/plugin.js'
import type { RunnablePlugin } from './plugins.js'

/** One handler the worker start ran: the plugin, which handler, and the error it raised. */
export interface WorkerStep {
  plugin: LuaPlugin
  handler: 'init_worker' | 'configure'
  error?: string
}

/**
 * Runs the worker start of each Lua runtime that has not had one; `begin` gives the recorder of a
 * handler's calls. The steps in the order they ran.
 */
export async function startWorkers(
  plugins: readonly RunnablePlugin[],
  ctx: Context,
  kit: KitTree,
  begin: (plugin: LuaPlugin, handler: WorkerStep['handler']) => Recorder,
  timeoutMs: number,
): Promise<WorkerStep[]> {
  const lua = plugins.filter((p): p is LuaPlugin => p.kind === 'lua')
  const fresh = lua.filter((p) => !p.runtime.worker.started)
  const steps: WorkerStep[] = []
  if (fresh.length > 0) {
    const saved = ctx.phase
    ctx.phase = 'init_worker'
    for (const p of fresh) p.runtime.worker.started = true
    // Kong runs a plugin's init_worker and configure once, whatever the number of its instances
    const once = fresh.filter((p, i) => fresh.findIndex((x) => x.name === p.name) === i)
    for (const p of once.filter((x) => x.phases.has('init_worker'))) {
      const error = await run(p, 'init_worker', ctx, kit, begin, timeoutMs)
      steps.push({ plugin: p, handler: 'init_worker', ...(error !== undefined ? { error } : {}) })
      if (error === undefined) continue
      const message = `failed to execute the "init_worker" handler for plugin "${p.name}": ${error}`
      p.runtime.worker.errors.push(message)
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
      const error = await run(p, 'configure', ctx, kit, begin, timeoutMs)
      steps.push({ plugin: p, handler: 'configure', ...(error !== undefined ? { error } : {}) })
      if (error !== undefined)
        ctx.logs.push({
          level: 'error',
          line: formatLine(ctx, 'error', `failed to execute plugin '${p.name}:configure (${error})`, 'init.lua:0'),
        })
    }
    ctx.phase = saved
  }
  const errors = [...new Set(lua.flatMap((p) => p.runtime.worker.errors))]
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
  p: LuaPlugin,
  handler: WorkerStep['handler'],
  ctx: Context,
  kit: KitTree,
  begin: (plugin: LuaPlugin, handler: WorkerStep['handler']) => Recorder,
  timeoutMs: number,
): Promise<string | undefined> {
  ctx.plugin = { name: p.name, id: p.id, config: p.config }
  try {
    const record = begin(p, handler)
    return await p.runtime.run(
      p,
      'init_worker',
      ctx,
      kit,
      record,
      timeoutMs,
      handler === 'configure' ? 'configure' : undefined,
    )
  } finally {
    ctx.plugin = undefined
  }
}
