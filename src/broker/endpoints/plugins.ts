import { existsSync } from 'node:fs'
import { basename, join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { type FlowPlugin, type FlowRecord, pluginName } from '../../../flows/contract.js'
import oauth11 from '../../../flows/oauth_1_1-legged.js'
import oauth12 from '../../../flows/oauth_1_2-legged.js'
import oauth13 from '../../../flows/oauth_1_3-legged.js'
import oauth22 from '../../../flows/oauth_2_2-legged.js'
import oauth23 from '../../../flows/oauth_2_3-legged.js'
import oauthDevice2 from '../../../flows/oauth_device_2.js'
import oauthEcho1 from '../../../flows/oauth_echo_1.js'
import oauthOwner2 from '../../../flows/oauth_owner_resources_2.js'
import { lineText, syntaxErrorPlace } from '../../../util/source-position.js'
import { brokerError } from '../../errors/index.js'

/**
 * The built-in flow plugins, by their composed names. A Map, not an object: a name is composed from
 * the request, and `auth_type=constructor` must not find Object.prototype.constructor.
 */
const BUILT_IN: ReadonlyMap<string, FlowPlugin> = new Map(
  Object.entries({
    'oauth_2_3-legged': oauth23,
    'oauth_2_2-legged': oauth22,
    oauth_owner_resources_2: oauthOwner2,
    oauth_device_2: oauthDevice2,
    'oauth_1_3-legged': oauth13,
    'oauth_1_2-legged': oauth12,
    'oauth_1_1-legged': oauth11,
    oauth_echo_1: oauthEcho1,
  }),
)

const NAME = /^[a-z]+(_[a-z_]+)?(_\d+)?(_\d+-legged)?$/
const EXTENSIONS = ['.js', '.mjs', '.cjs']

/** Finds flow plugins among the built-ins, then in the user's `plugins.dir`; caches what it loads. */
export class PluginRegistry {
  private readonly cache = new Map<string, FlowPlugin>()
  // Loads under way, and loads that failed: Node keeps a module's failed import until the process
  // ends, so a broken plugin fails alike for every request naming it; kept here, those requests
  // neither import it nor look for the syntax error's place again. Bounded by the files in `dir`.
  private readonly loading = new Map<string, Promise<FlowPlugin>>()

  constructor(private readonly dir?: string) {}

  /** The plugin called `name` when it is built in or loaded already (no I/O, no await), else undefined. */
  loaded(name: string): FlowPlugin | undefined {
    return BUILT_IN.get(name) ?? this.cache.get(name)
  }

  /** The plugin called `name`; FLOW_PLUGIN_MISSING names it (never a path) when there is none. */
  async get(name: string): Promise<FlowPlugin> {
    const known = this.loaded(name)
    if (known) return known
    // Names come from sanitized fields only, so a name can never climb out of the folder.
    const file =
      NAME.test(name) && this.dir
        ? EXTENSIONS.map((ext) => join(this.dir!, name + ext)).find((f) => existsSync(f))
        : undefined
    if (!file) throw brokerError('pluginMissing', { plugin: name })
    let loading = this.loading.get(name)
    if (!loading) this.loading.set(name, (loading = loadPlugin(file, name)))
    const plugin = await loading
    this.cache.set(name, plugin)
    this.loading.delete(name)
    return plugin
  }

  /** Every plugin name available: built-ins plus what is loaded. */
  names(): string[] {
    return [...BUILT_IN.keys(), ...this.cache.keys()]
  }
}

// Node's import errors name absolute paths ("… imported from /srv/broker/plugins/x.js"); an HTTP
// client must never see a path, so each keeps its file name only.
const ABSOLUTE_PATH = /(?<=^|[\s'"(`])(?:file:\/\/)?(?:\/|[A-Za-z]:\\)[^\s'"`)]+/g
const withoutPaths = (message: string): string =>
  message.replace(ABSOLUTE_PATH, (path) => basename(path.replace(/\\/g, '/')))

async function loadPlugin(file: string, name: string): Promise<FlowPlugin> {
  let mod: Record<string, unknown>
  try {
    mod = (await import(pathToFileURL(resolve(file)).href)) as Record<string, unknown>
  } catch (err) {
    const reason = withoutPaths((err as Error).message.split('\n')[0] ?? '')
    // The place in the plugin's own file only: another file's would need its name.
    const place = await syntaxErrorPlace(err, resolve(file))
    const where = place?.file === resolve(file) ? ` at ${lineText(place)}` : ''
    throw brokerError('pluginLoadFailed', { plugin: name, reason: `${reason}${where}` })
  }
  const candidate = (mod.default && typeof mod.default === 'object' ? mod.default : mod) as Partial<FlowPlugin>
  if (typeof candidate.start !== 'function') {
    throw brokerError('pluginWithoutStart', { plugin: name })
  }
  return candidate as FlowPlugin
}

/** The composed plugin name of a sanitized record. */
export const recordPluginName = (record: FlowRecord): string => pluginName(record)

/** The record as its plugin reads it (the plugin's `normalize`: OAuth 1.0a's signature method, key and token aliases). */
export const normalizeRecord = (record: FlowRecord, plugin: FlowPlugin): FlowRecord =>
  plugin.normalize ? plugin.normalize({ ...record }) : record
