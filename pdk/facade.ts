/**
 * The `kong` object handed to plugin modules, following the kong-js-pdk contract: every function
 * under its snake_case and camelCase name, returning a promise; a soft failure (nil, err) rejects.
 */
import type { KitTree } from './kit.js'
import { invoke, type Recorder } from './trace.js'
import { split } from './values.js'

/** The error kong-js-pdk plugins see for a failed call (`kong.Error`). */
export class PDKError extends Error {
  override get name(): string {
    return 'PDKError'
  }
}

const toCamel = (name: string): string => name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase())
// kong-js-pdk maps a camelCase name back only where a lowercase letter precedes the capital, so
// its typings spell get_tls1_version_str as getTls1_versionStr: that spelling must work too
const toJsPdkCamel = (name: string): string =>
  name.replace(/([a-z])_([a-z])/g, (_, a: string, b: string) => a + b.toUpperCase())

export type Facade = Record<string, unknown>

/**
 * Wraps the kit for module plugins; `record` sees every call (for the trace). Wrappers are made
 * on first use through getters on a prototype shared by all runs, so a replay pays only for the
 * functions its plugins touch.
 */
export function createFacade(kit: KitTree, record: () => Recorder | undefined): Facade {
  const facade = wrap(kit, '', record)
  Object.defineProperty(facade, 'Error', { value: PDKError })
  return facade
}

interface Holder {
  $tree: KitTree
  $record: () => Recorder | undefined
}

const prototypes = new Map<string, object>()

function wrap(tree: KitTree, prefix: string, record: () => Recorder | undefined): Facade {
  const names = Object.keys(tree)
  const key = `${prefix}|${names.join(',')}`
  let proto = prototypes.get(key)
  if (!proto) {
    proto = {}
    for (const name of names) {
      const path = prefix ? `${prefix}.${name}` : name
      const aliases = [...new Set([name, toCamel(name), toJsPdkCamel(name)])]
      const get = function (this: Holder): unknown {
        const v = this.$tree[name]!
        const value =
          typeof v === 'function'
            ? wrapFn(v as (...a: unknown[]) => unknown, path, this.$record)
            : wrap(v, path, this.$record)
        for (const alias of aliases) Object.defineProperty(this, alias, { value, enumerable: true })
        return value
      }
      for (const alias of aliases) Object.defineProperty(proto, alias, { get, enumerable: true, configurable: true })
    }
    prototypes.set(key, proto)
  }
  // kong.log(...) is itself the base log call at notice severity, as Kong's log table is callable
  const base = prefix === 'log' ? tree.notice : undefined
  const out = (
    typeof base === 'function'
      ? Object.setPrototypeOf(wrapFn(base as (...a: unknown[]) => unknown, 'log', record), proto)
      : Object.create(proto)
  ) as Facade
  Object.defineProperty(out, '$tree', { value: tree })
  Object.defineProperty(out, '$record', { value: record })
  return out
}

function wrapFn(fn: (...a: unknown[]) => unknown, path: string, record: () => Recorder | undefined) {
  return async (...args: unknown[]): Promise<unknown> => {
    const result = await invoke(fn, path, args, record())
    const { value, err } = split(result)
    if (err !== undefined && err !== null) throw new PDKError(`PDK method kong.${path} failed:  ${String(err)}`)
    // Kong's plugin server hands external plugins the serialized log as JSON text
    if (path === 'log.serialize') return JSON.stringify(value)
    return value
  }
}
