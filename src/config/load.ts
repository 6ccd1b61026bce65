import { existsSync } from 'node:fs'
import { access, readFile } from 'node:fs/promises'
import { extname, resolve } from 'node:path'
import { z } from 'zod'
import { jsonErrorMessage, lineText, placeText, syntaxErrorPlace } from '../../util/source-position.js'
import { BrokerError, brokerError } from '../errors/index.js'
import { importConfigModule } from './import-module.js'
import { CONFIG_KEYS, envName, unwrap } from './keys.js'
import { type BrokerConfig, type ConfigInput, configSchema } from './schema.js'

export interface LoadOptions {
  /** `-c` as given: read relative to `cwd`. */
  file?: string
  /** Overrides from command-line flags, already nested (`{store: {port: 1}}`). */
  flags?: ConfigInput
  env?: NodeJS.ProcessEnv
  cwd?: string
}

export interface LoadedConfig {
  config: Readonly<BrokerConfig>
  /** The file that was read, if any. */
  file?: string
}

/** Loads the config with precedence flags > BROKER_* env > file > defaults, validated once and frozen. */
export async function loadConfig(opts: LoadOptions = {}): Promise<LoadedConfig> {
  const cwd = opts.cwd ?? process.cwd()
  const file = opts.file ? resolve(cwd, opts.file) : defaultFile(cwd)
  const fromFile = file ? await readConfigFile(file) : {}
  const fromEnv = envOverrides(opts.env ?? process.env)
  const layers: Array<[string, Record<string, unknown>]> = [
    ['command-line flag', (opts.flags ?? {}) as Record<string, unknown>],
    ['environment', fromEnv.values],
    [file ?? 'defaults', fromFile],
  ]
  const merged = [...layers].reverse().reduce<Record<string, unknown>>((acc, [, layer]) => deepMerge(acc, layer), {})
  // A port set above the layer that set a localhost host (`--port 4000` over config/default.js):
  // the URLs the broker builds should point at that port, not the file's. (`--port 0`: the host
  // becomes localhost:0 here, and `serve` puts in the port it picks.)
  const rank = (key: string) => layers.findIndex(([, values]) => values[key] !== undefined)
  const [portRank, hostRank] = [rank('port'), rank('host')]
  const host = merged.host
  if (
    typeof merged.port === 'number' &&
    merged.port >= 0 &&
    portRank !== -1 &&
    (hostRank === -1 || (portRank < hostRank && typeof host === 'string' && /^localhost(:\d+)?$/.test(host)))
  ) {
    merged.host = `localhost:${merged.port}`
  }
  const parsed = configSchema.safeParse(merged)
  if (!parsed.success) throw configError(parsed.error, layers, fromEnv.names)
  return { config: deepFreeze(parsed.data), file }
}

function defaultFile(cwd: string): string | undefined {
  const candidate = resolve(cwd, 'config/default.js')
  return existsSync(candidate) ? candidate : undefined
}

/** Reads a `.js` (ESM or CommonJS), `.mjs`, `.cjs` or `.json` config file. */
export async function readConfigFile(file: string): Promise<Record<string, unknown>> {
  try {
    await access(file)
  } catch {
    throw brokerError('configUnreadable', { file })
  }
  const ext = extname(file)
  let value: unknown
  try {
    if (ext === '.json') {
      const text = await readFile(file, 'utf8')
      try {
        value = JSON.parse(text)
      } catch (err) {
        throw new Error(jsonErrorMessage(text, err), { cause: err })
      }
    } else if (['.js', '.mjs', '.cjs'].includes(ext)) {
      const mod = await importConfigModule(file)
      value = mod.default ?? mod
      if (typeof value === 'function') value = await (value as () => unknown)()
    } else {
      throw new Error(`unsupported extension "${ext}" (use .js, .mjs, .cjs or .json)`)
    }
  } catch (err) {
    throw brokerError('configLoadFailed', { file, reason: await loadFailure(err, file) })
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    throw brokerError('configNotObject', { file })
  }
  return value as Record<string, unknown>
}

/** Why a config file failed to load: the error's message, with the line (and column) of a syntax error. */
async function loadFailure(err: unknown, file: string): Promise<string> {
  const message = String((err as Error)?.message ?? err)
  const place = await syntaxErrorPlace(err, file)
  if (!place) return message
  return place.file === file ? `${message} at ${lineText(place)}` : `${message} at ${placeText(place.file, place)}`
}

// The loader's names for the key list, kept for callers that know them by these.
export { CONFIG_KEYS as CONFIG_LEAVES, envName }

function envOverrides(env: NodeJS.ProcessEnv): { values: Record<string, unknown>; names: Map<string, string> } {
  const values: Record<string, unknown> = {}
  const names = new Map<string, string>()
  for (const leaf of CONFIG_KEYS) {
    const raw = env[leaf.env]
    if (raw === undefined || raw === '') continue
    const value =
      leaf.kind === 'number' && /^-?\d+(\.\d+)?$/.test(raw.trim())
        ? Number(raw)
        : leaf.kind === 'array'
          ? raw
              .split(',')
              .map((s) => s.trim())
              .filter(Boolean)
          : leaf.kind === 'boolean' && /^(true|false|1|0|yes|no|on|off)$/i.test(raw.trim())
            ? /^(true|1|yes|on)$/i.test(raw.trim())
            : raw
    setPath(values, leaf.path, value)
    names.set(leaf.key, leaf.env)
  }
  return { values, names }
}

function configError(
  error: z.ZodError,
  layers: Array<[string, Record<string, unknown>]>,
  envNames: Map<string, string>,
): BrokerError {
  // Where a key's value came from: the highest layer that sets it (flags and env carry unset keys as undefined).
  const origin = (path: ReadonlyArray<string | number>): string => {
    const layer = layers.find(([, values]) => hasPath(values, path))
    if (!layer) return 'defaults'
    return layer[0] === 'environment'
      ? `environment variable ${envNames.get(path.join('.')) ?? envName(path.map(String))}`
      : layer[0]
  }
  const lines = error.issues.flatMap((issue) => {
    if (issue.code === 'unrecognized_keys') {
      const known = Object.keys(shapeAt(configSchema, issue.path) ?? {})
      return issue.keys.map((k) => {
        const path = [...issue.path, k]
        return `"${path.join('.')}" (${origin(path)}): unknown key${known.length ? `; expected one of ${known.join(', ')}` : ''}`
      })
    }
    return [`${issue.path.join('.') || '(root)'} (${origin(issue.path)}): ${issue.message}`]
  })
  const first = error.issues[0]
  const firstKey = first?.code === 'unrecognized_keys' ? [...first.path, first.keys[0]] : first?.path
  return brokerError('configInvalid', { problems: lines, key: firstKey ? firstKey.join('.') : undefined })
}

/** The keys a config object accepts at `path` (for "expected one of …"). */
function shapeAt(schema: z.ZodTypeAny, path: ReadonlyArray<string | number>): Record<string, unknown> | undefined {
  let inner = unwrap(schema).inner
  for (const p of path) {
    if (!(inner instanceof z.ZodObject)) return undefined
    inner = unwrap((inner.shape as Record<string, z.ZodTypeAny>)[String(p)] ?? z.never()).inner
  }
  return inner instanceof z.ZodObject ? (inner.shape as Record<string, unknown>) : undefined
}

function hasPath(obj: Record<string, unknown>, path: ReadonlyArray<string | number>): boolean {
  let cur: unknown = obj
  for (const p of path) {
    if (!cur || typeof cur !== 'object' || !(p in (cur as object))) return false
    cur = (cur as Record<string | number, unknown>)[p]
  }
  return path.length > 0 && cur !== undefined
}

function setPath(obj: Record<string, unknown>, path: readonly string[], value: unknown): void {
  let cur = obj
  for (const p of path.slice(0, -1)) cur = (cur[p] ??= {}) as Record<string, unknown>
  cur[path[path.length - 1]!] = value
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v)

function deepMerge(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base }
  for (const [k, v] of Object.entries(over)) {
    if (v === undefined) continue
    out[k] = isPlainObject(v) && isPlainObject(out[k]) ? deepMerge(out[k] as Record<string, unknown>, v) : v
  }
  return out
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const v of Object.values(value)) deepFreeze(v)
    Object.freeze(value)
  }
  return value
}
