import { z } from 'zod'
import { CONFIG_DOCS, type ConfigKey, type KeyDoc } from './key-docs.js'
import { configSchema } from './schema.js'

export type { ConfigKey, KeyDoc } from './key-docs.js'

/** One configuration key as the loader, the flags and the docs see it, all read off the schema. */
export interface ConfigKeyInfo extends KeyDoc {
  key: ConfigKey
  path: readonly string[]
  /** `store.expire` → `BROKER_STORE_EXPIRE`; a list is a comma list there. */
  env: string
  kind: 'number' | 'string' | 'array' | 'boolean'
  /** The schema's own default for this key; undefined when it has none. */
  default: unknown
  /** The default as help and docs/configuration.md show it; undefined when there is nothing to show. */
  defaultText?: string
  /** Allowed values (an enum, or a list of an enum). */
  options?: readonly string[]
  min?: number
  max?: number
}

/** `store.expire` → `BROKER_STORE_EXPIRE`. */
export const envName = (path: readonly string[]): string => `BROKER_${path.join('_').toUpperCase()}`

/** The schema's leaves in schema order, so that no list of keys is kept by hand. */
function leaves(schema: z.ZodTypeAny, path: string[] = []): ConfigKeyInfo[] {
  const { inner, fallback } = unwrap(schema)
  if (inner instanceof z.ZodObject) {
    return Object.entries(inner.shape as Record<string, z.ZodTypeAny>).flatMap(([k, v]) => leaves(v, [...path, k]))
  }
  const key = path.join('.') as ConfigKey
  const doc: KeyDoc = CONFIG_DOCS[key]
  const element = inner instanceof z.ZodArray ? unwrap(inner.element as z.ZodTypeAny).inner : inner
  const kind =
    inner instanceof z.ZodNumber
      ? 'number'
      : inner instanceof z.ZodArray
        ? 'array'
        : inner instanceof z.ZodBoolean
          ? 'boolean'
          : 'string'
  return [
    {
      ...doc,
      key,
      path,
      env: envName(path),
      kind,
      default: fallback,
      defaultText:
        doc.shown ??
        (fallback === undefined ? undefined : Array.isArray(fallback) ? fallback.join(',') : String(fallback)),
      options: element instanceof z.ZodEnum ? (element.options as string[]) : undefined,
      min: inner instanceof z.ZodNumber ? (inner.minValue ?? undefined) : undefined,
      max: inner instanceof z.ZodNumber ? (inner.maxValue ?? undefined) : undefined,
    },
  ]
}

/** The type under defaults, optionals and refinements, and the first default met on the way. */
export function unwrap(schema: z.ZodTypeAny): { inner: z.ZodTypeAny; fallback: unknown } {
  let s = schema
  let fallback: unknown
  for (;;) {
    if (s instanceof z.ZodDefault) {
      fallback ??= s._def.defaultValue()
      s = s._def.innerType
    } else if (s instanceof z.ZodOptional) s = s._def.innerType
    else if (s instanceof z.ZodEffects) s = s._def.schema
    else return { inner: s, fallback }
  }
}

/** Every configuration key, in schema order. */
export const CONFIG_KEYS: readonly ConfigKeyInfo[] = leaves(configSchema)
