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

export type Facade = Record<string, unknown>

/** Wraps the kit for module plugins; `record` sees every call (for the trace). */
export function createFacade(kit: KitTree, record: () => Recorder | undefined): Facade {
  const wrap = (tree: KitTree, prefix: string): Facade => {
    const out: Facade = {}
    for (const [name, v] of Object.entries(tree)) {
      const path = prefix ? `${prefix}.${name}` : name
      const value = typeof v === 'function' ? wrapFn(v as (...a: unknown[]) => unknown, path, record) : wrap(v, path)
      out[name] = value
      const camel = toCamel(name)
      if (camel !== name) out[camel] = value
    }
    return out
  }
  const facade = wrap(kit, '')
  Object.defineProperty(facade, 'Error', { value: PDKError })
  return facade
}

function wrapFn(fn: (...a: unknown[]) => unknown, path: string, record: () => Recorder | undefined) {
  return async (...args: unknown[]): Promise<unknown> => {
    const result = await invoke(fn, path, args, record())
    const { value, err } = split(result)
    if (err !== undefined && err !== null) throw new PDKError(`PDK method kong.${path} failed:  ${String(err)}`)
    return value
  }
}
