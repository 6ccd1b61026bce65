/**
 * Kong's side of one PDK call from an external plugin (`call_pdk_method` in mp_rpc.lua): the
 * method found by its dotted name, arguments as Lua received them, the first return value only,
 * reshaped as Kong sends it. Module plugins in process and through a plugin server both use it.
 */
import type { Context } from '../kit/context.js'
import { KIT_MODULES, type KitFunction, type KitTree } from '../kit/index.js'
import { formatLine } from '../kit/log/line.js'
import { errorMessage, type Recorder } from '../kit/private/trace.js'
import { split, toList } from '../kit/private/values.js'
import { cjsonEncode, fromLua, MUST_FIX, toLua } from './lua-values.js'
import { ClearingMap } from '../../util/clearing-map.js'

/** What Kong does with a call: answers it, raises (the phase fails), or ends the request (exit). */
export type Served = { kind: 'value'; value: unknown } | { kind: 'raised'; message: string } | { kind: 'exit' }

/** Calls that never return to the plugin: Kong ends the request (kong-js-pdk does not wait either). */
export const NON_RETURN = new Set(['kong.response.exit', 'kong.response.error'])

// Kong's log functions name the line of call_pdk_method that called them
const SITE = 'mp_rpc.lua:127'

const overrides: Record<string, (kit: KitTree) => KitFunction> = {
  // exposed_api in plugin_servers/plugin.lua: the serialized log goes out as cjson text
  'kong.log.serialize': (kit) => () => cjsonEncode(((kit.log as KitTree).serialize as () => unknown)()),
}

// method names are few and repeat on every replay: their segments are split once
const SEGMENTS = new ClearingMap<string, string[]>(1000)

/** The kit function a dotted method name reaches, or undefined as Kong's index_table gives nil. */
function resolve(kit: KitTree, method: string): KitFunction | KitTree | undefined {
  const override = Object.hasOwn(overrides, method) ? overrides[method] : undefined
  if (override) return override(kit)
  let segs = SEGMENTS.get(method)
  if (!segs) {
    SEGMENTS.set(method, (segs = method.split('.')))
  }
  let node: KitFunction | KitTree | undefined = kit
  for (let i = segs[0] === 'kong' ? 1 : 0; i < segs.length && node !== undefined; i++) {
    if (typeof node === 'function') return undefined
    const seg = segs[i]!
    // the kit's modules are getters on its prototype until first used
    node = Object.hasOwn(node, seg) || (node === kit && KIT_MODULES.has(seg)) ? node[seg] : undefined
  }
  return node
}

function finish(method: string, result: unknown): Served {
  if (NON_RETURN.has(method)) return { kind: 'exit' }
  const { value } = split(result)
  const fix = Object.hasOwn(MUST_FIX, method) ? MUST_FIX[method] : undefined
  try {
    return { kind: 'value', value: fix ? fix(value) : fromLua(value) }
  } catch (e) {
    return { kind: 'raised', message: errorMessage(e) }
  }
}

/** Serves one call (`kong.request.get_header`, args) from the kit; sync unless the kit function is async. */
export function serveCall(
  kit: KitTree,
  ctx: Context,
  method: string,
  args: readonly unknown[],
  record: Recorder | undefined,
): Served | Promise<Served> {
  let target = resolve(kit, method)
  // kong.log(...) is itself a call: Kong's log table is callable, at notice severity
  if (method === 'kong.log' && target !== undefined && typeof target !== 'function') target = target.notice
  const path = method.startsWith('kong.') ? method.slice(5) : method
  if (target === undefined) {
    ctx.logs.push({
      level: 'error',
      line: formatLine(ctx, 'error', `could not find pdk method: ${method}`, 'mp_rpc.lua:116', ctx.plugin?.name),
    })
    record?.({ call: path, args: [...args], returns: [] })
    return { kind: 'value', value: undefined }
  }
  // strings, numbers and booleans cross unchanged: copy only when something must change
  const luaArgs = args.some((a) => typeof a === 'object' || a === undefined) ? args.map(toLua) : (args as unknown[])
  if (typeof target !== 'function') return raised(path, luaArgs, 'attempt to call a table value', record)
  let result: unknown
  ctx.site = SITE
  try {
    result = (target as (...a: unknown[]) => unknown)(...luaArgs)
  } catch (e) {
    return raised(path, luaArgs, errorMessage(e), record)
  } finally {
    ctx.site = undefined
  }
  if (result instanceof Promise)
    return result.then(
      (r: unknown) => answered(method, path, luaArgs, r, record),
      (e: unknown) => raised(path, luaArgs, errorMessage(e), record),
    )
  return answered(method, path, luaArgs, result, record)
}

function raised(path: string, args: unknown[], message: string, record: Recorder | undefined): Served {
  record?.({ call: path, args, throws: message })
  return { kind: 'raised', message }
}

function answered(method: string, path: string, args: unknown[], result: unknown, record: Recorder | undefined) {
  record?.({ call: path, args, returns: toList(result) })
  return finish(method, result)
}
