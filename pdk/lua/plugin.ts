/**
 * Lua plugins of a fixture: found from their `module` path (Kong's `kong/plugins/<name>/` layout),
 * loaded into one runtime per fixture with their schema's defaults, or refused with the field.
 */
import { existsSync, statSync } from 'node:fs'
import { basename, dirname, isAbsolute, resolve } from 'node:path'
import { FixtureError, type LoadedFixture, type PluginSpec } from '../fixture/index.js'
import type { Context } from '../kit/context.js'
import { createKit, type KitTree } from '../kit/index.js'
import { buildContext } from '../fixture/setup.js'
import { kongConfiguration } from './configuration.js'
import { luaPathTemplates } from './modules.js'
import { LuaRuntime } from './runtime.js'
import { LuaError } from './vm.js'
import { RAN, type PluginHandler } from '../kit/private/handler.js'
import { closest } from '../../util/closest.js'

/** What a Lua plugin's handler.lua gives when loaded into its runtime's slot. */
export interface LuaPluginSpec {
  index: number
  name: string
  id: string
  /** Its config, the schema's defaults filled. */
  config: Record<string, unknown>
  info: { priority: number; version?: string; phases: string[] }
  runtime: LuaRuntime
}

/** A Lua plugin as a handler: its phases run in its runtime, which is its worker. */
export function luaHandler(spec: LuaPluginSpec): PluginHandler {
  const { index, name, runtime } = spec
  const target = { index, name }
  return {
    index,
    name,
    id: spec.id,
    config: spec.config,
    priority: spec.info.priority,
    ...(spec.info.version !== undefined ? { version: spec.info.version } : {}),
    phases: new Set(spec.info.phases),
    worker: runtime.worker,
    async run(handler, { ctx, kit, record, timeoutMs }) {
      // Kong calls configure in init_worker; a Lua error fails the phase (traceback included)
      const failed =
        handler === 'configure'
          ? await runtime.run(target, 'init_worker', ctx, kit, record, timeoutMs, 'configure')
          : await runtime.run(target, handler, ctx, kit, record, timeoutMs)
      return failed === undefined ? RAN : { failed }
    },
    close: () => runtime.close(),
  }
}

/** Whether a plugin entry's module is a Lua plugin (a handler.lua, or its folder). */
export function isLuaModule(dir: string, module: string): boolean {
  if (module.endsWith('.lua')) return true
  const abs = resolve(dir, module)
  try {
    return statSync(abs).isDirectory() && existsSync(resolve(abs, 'handler.lua'))
  } catch {
    return false
  }
}

/** Where a Lua plugin sits: its name, its handler file and the root above `kong/`. */
export function locate(dir: string, module: string): { name: string; handler: string; root: string } | undefined {
  const abs = isAbsolute(module) ? module : resolve(dir, module)
  const folder = abs.endsWith('.lua') ? dirname(abs) : abs.replace(/[/\\]+$/, '')
  const plugins = dirname(folder)
  if (basename(plugins) !== 'plugins' || basename(dirname(plugins)) !== 'kong') return undefined
  return { name: basename(folder), handler: resolve(folder, 'handler.lua'), root: dirname(dirname(plugins)) }
}

export interface LuaOptions {
  /** `--lua-path`: more roots, after the fixture's `lua_path`. */
  luaPath?: string[]
  /** Bytes the Lua heap may hold (128 MiB). */
  heapLimit?: number
}

type Entry = { spec: PluginSpec; index: number; id: string }

/** Loads the Lua plugins among a fixture's entries into one runtime. */
export async function prepareLuaPlugins(
  loaded: LoadedFixture,
  entries: Entry[],
  options: LuaOptions = {},
): Promise<PluginHandler[]> {
  const f = loaded.fixture
  const at = (i: number, field = 'module') => `$.plugins[${i}].${field}`
  const found = entries.map(({ spec, index }) => {
    const where = locate(loaded.dir, spec.module!)
    if (!where)
      throw new FixtureError(
        loaded.file,
        at(index),
        `is not a Kong Lua plugin: expected <root>/kong/plugins/<name>/handler.lua (or its folder), got ${spec.module}`,
      )
    if (!existsSync(where.handler))
      throw new FixtureError(loaded.file, at(index), `has no handler.lua (${where.handler})`)
    if (spec.name !== undefined && spec.name !== where.name)
      throw new FixtureError(
        loaded.file,
        at(index, 'name'),
        `is "${spec.name}" but the plugin at ${spec.module} is "${where.name}": leave name out, or make them equal`,
      )
    return where
  })
  const roots = [
    ...new Set([
      ...found.map((w) => w.root),
      ...(f.lua_path ?? []).map((p) => resolve(loaded.dir, p)),
      ...(options.luaPath ?? []).map((p) => resolve(p)),
    ]),
  ]
  const runtime = await runtimeFor(loaded, roots, options)
  try {
    return entries.map(({ spec, index, id }, n) => {
      const { name } = found[n]!
      let config: Record<string, unknown>
      try {
        const [conf, errors] = runtime.schema(name, spec.config ?? {})
        if (errors) {
          // Every field the schema refuses at once; a misspelt one with the closest field of its record.
          const problems = Object.entries(errors)
            .sort()
            .map(([field, reason]) => ({
              path: at(index, field === '@entity' || field === '@config' ? 'config' : `config.${field}`),
              reason:
                reason === 'unknown field' ? unknownField(field, runtime.fieldNames(name, parentOf(field))) : reason,
            }))
          throw new FixtureError(loaded.file, problems[0]!.path, problems[0]!.reason, 'config', problems)
        }
        // Kong hands the handler its config with the ids of the plugin's scope and its own
        const ids = scopeIds(spec)
        config = { ...conf, ...ids, __plugin_id: id, ...configKeys(name, ids, '', index + 1) }
        return luaHandler({ index, name, id, config, info: runtime.load(index, name, config), runtime })
      } catch (e) {
        throw loadError(e, loaded.file, at(index), runtime)
      }
    })
  } catch (e) {
    runtime.close()
    throw e
  }
}

/** The runtime of a fixture's Lua plugins, whose roots are searched in order. */
export function runtimeFor(loaded: LoadedFixture, roots: string[], options: LuaOptions = {}): Promise<LuaRuntime> {
  const f = loaded.fixture
  const probe = probeOf(f)
  return LuaRuntime.create({
    roots,
    templates: luaPathTemplates(process.env.LUA_PATH),
    configuration: kongConfiguration(f),
    db: (f.db ?? {}) as Record<string, unknown[]>,
    probe,
    clock: probe.ctx.clock,
    heapLimit: options.heapLimit ?? 128 * 1024 * 1024,
    file: loaded.file,
    chunks: f.upstream?.chunks,
    shared: f.ngx_shared,
  })
}

/** The kit a fixture's Lua plugins load with: the fixture's node and configuration, no request yet. */
function probeOf(f: LoadedFixture['fixture']): { kit: KitTree; ctx: Context } {
  const ctx = buildContext(f)
  return { kit: createKit(ctx), ctx }
}

function loadError(e: unknown, file: string, path: string, runtime: LuaRuntime): unknown {
  if (e instanceof FixtureError) return e
  if (!(e instanceof LuaError)) return e
  // the message keeps its `file:line`; Lua's traceback would only name broker's own loader
  const message = e.message.replace(/\nstack traceback:[\s\S]*$/, '')
  const missing = runtime.missingModule(e.message, path)
  if (missing) return missing
  // Lua's parser: `file:line: <what> near '<token>'` (a LuaJIT-only construct among them)
  if (/^[^\n]*\.lua:\d+: [^\n]* near [^\n]+$/.test(message) || /unexpected symbol|malformed number/.test(message))
    return syntaxError(message, file, path, runtime)
  return new FixtureError(file, path, `failed to load: ${message}`)
}

/**
 * A file that does not parse: a LuaJIT-only construct says which, and a library's file (not under the plugin's
 * kong/plugins/) says so with the modules that required it, since the plugin's author cannot fix it there.
 */
function syntaxError(message: string, file: string, path: string, runtime: LuaRuntime): FixtureError {
  if (/malformed number near '[0-9a-fA-FxX.pP+-]*[iI]'/.test(message))
    return new FixtureError(
      file,
      path,
      `does not parse: ${message} (LuaJIT's imaginary number literal; Lua 5.4, which broker runs, has none)`,
      'luajit-syntax',
    )
  const shown = /^(.+?\.lua):\d+: /.exec(message)?.[1]
  if (!shown || shown.startsWith('kong/plugins/'))
    return new FixtureError(file, path, `does not parse: ${message}`, 'lua-syntax')
  const chain = runtime.loadedBy.get(shown)?.split(' → ').slice(0, -1).join(' → ')
  const by = chain ? `, required by ${chain}` : ''
  return new FixtureError(file, path, `does not parse: ${message} (a library's file${by})`, 'lua-syntax-library')
}

/** config.route_id, service_id and consumer_id of a plugin entry's scope, as Kong's plugins iterator sets them. */
const scopeIds = (spec: Entry['spec']): Record<string, string> =>
  Object.fromEntries(
    (['route', 'service', 'consumer'] as const).flatMap((k) =>
      spec.phases === undefined && spec[k] ? [[`${k}_id`, spec[k].id]] : [],
    ),
  )

const parentOf = (field: string) => field.slice(0, Math.max(0, field.lastIndexOf('.')))

/**
 * The config's `__key__` and `__seq__` as Kong's plugins iterator adds them: the plugin row's cache key
 * (`plugins:<name>:<route>:<service>:<consumer>::<workspace>`), which Kong's AI plugins read their name from, and
 * the instance's sequence number.
 */
export function configKeys(name: string, ids: Record<string, unknown>, ws: string, seq: number) {
  const id = (k: string) => (typeof ids[`${k}_id`] === 'string' ? String(ids[`${k}_id`]) : '')
  return { __key__: `plugins:${name}:${id('route')}:${id('service')}:${id('consumer')}::${ws}`, __seq__: seq }
}

/** Kong's "unknown field", with the closest field of the same record when one is close. */
function unknownField(field: string, known: readonly string[]): string {
  const near = closest(field.slice(field.lastIndexOf('.') + 1), known)
  return near ? `unknown field (did you mean ${near}?)` : 'unknown field'
}
