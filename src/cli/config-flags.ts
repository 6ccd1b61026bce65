import * as Flags from '@oclif/core/flags'
import type { Interfaces } from '@oclif/core'
import { CONFIG_KEYS, type ConfigKeyInfo } from '../config/keys.js'
import type { ConfigInput } from '../config/schema.js'

// What parsing gives is only known at run time (a string, number, boolean or list of strings).
type ConfigFlag =
  | Interfaces.OptionFlag<string | undefined>
  | Interfaces.OptionFlag<string[] | undefined>
  | Interfaces.OptionFlag<number | undefined>
  | Interfaces.BooleanFlag<boolean>

/**
 * A flag for every configuration key, written from the schema: its name, char, help, options and
 * bounds. No flag has an oclif default or env: an unset flag must stay unset, so that the
 * environment, the config file and the schema's defaults below it still apply (the loader reads
 * BROKER_* itself, naming the variable when its value is wrong).
 */
export function serveFlags(): Record<string, ConfigFlag> {
  return Object.fromEntries(CONFIG_KEYS.map((k) => [k.flag, configFlag(k)]))
}

function configFlag(k: ConfigKeyInfo): ConfigFlag {
  const common = { char: k.char, summary: flagSummary(k) }
  if (k.kind === 'boolean') return Flags.boolean<boolean>({ ...common, allowNo: true })
  if (k.kind === 'number') return Flags.integer({ ...common, min: k.min, max: k.max })
  const options = k.options ? [...k.options] : undefined
  return k.kind === 'array'
    ? Flags.string({ ...common, options, multiple: true })
    : Flags.string({ ...common, options })
}

/** Help in the shape oclif gives flags with a default or env: "[default: 60, env: BROKER_STORE_EXPIRE] Seconds … (store.expire)." */
function flagSummary(k: ConfigKeyInfo): string {
  const meta = k.defaultText === undefined ? `env: ${k.env}` : `default: ${k.defaultText}, env: ${k.env}`
  const repeat = k.kind === 'array' ? ` Repeat for more (${k.env}: a comma list).` : ''
  const secret = k.secret ? ` Prefer ${k.env}: flags show in ps.` : ''
  return `[${meta}] ${k.help} (${k.key}).${repeat}${secret}`
}

/**
 * The parsed flags of serveFlags() as nested config overrides. Unset flags are left out, not set to
 * undefined: a store.tls object, even an empty one, turns TLS on, so it exists only when a TLS flag is given.
 */
export function configFromFlags(flags: Readonly<Record<string, unknown>>): ConfigInput {
  const out: Record<string, unknown> = {}
  for (const k of CONFIG_KEYS) {
    const value = normalise(k.key, flags[k.flag])
    if (value === undefined) continue
    let at = out
    for (const p of k.path.slice(0, -1)) at = (at[p] ??= {}) as Record<string, unknown>
    at[k.path[k.path.length - 1]!] = value
  }
  return out as ConfigInput
}

/**
 * The config wants pid.dir to end with "/" (the spec's form); on the command line `--pid-dir /tmp`
 * can only mean the directory, so the flag adds the slash.
 */
function normalise(key: string, value: unknown): unknown {
  if (key === 'pid.dir' && typeof value === 'string' && value && !value.endsWith('/')) return `${value}/`
  return value
}
