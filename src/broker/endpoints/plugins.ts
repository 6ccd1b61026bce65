import { existsSync } from 'node:fs'
import { basename, join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { type FlowPlugin, type FlowRecord, pluginName } from '../../../flows/contract.js'
import { brokerError } from '../../errors/index.js'

/**
 * The built-in flow plugins, by their composed names, each imported when a request first names it: an
 * idle worker loads none of them (with jose and oauth-1.0a, 0.8 MB of its 12.4 MB live heap; see
 * docs/decisions/0012), and one that serves one kind of flow only that one. A Map, not an object: a name
 * is composed from the request, and `auth_type=constructor` must not find Object.prototype.constructor.
 */
const BUILT_IN: ReadonlyMap<string, () => Promise<{ default: FlowPlugin }>> = new Map(
  Object.entries({
    'oauth_2_3-legged': () => import('../../../flows/oauth_2_3-legged.js'),
    'oauth_2_2-legged': () => import('../../../flows/oauth_2_2-legged.js'),
    oauth_owner_resources_2: () => import('../../../flows/oauth_owner_resources_2.js'),
    oauth_device_2: () => import('../../../flows/oauth_device_2.js'),
    'oauth_1_3-legged': () => import('../../../flows/oauth_1_3-legged.js'),
    'oauth_1_2-legged': () => import('../../../flows/oauth_1_2-legged.js'),
    'oauth_1_1-legged': () => import('../../../flows/oauth_1_1-legged.js'),
    oauth_echo_1: () => import('../../../flows/oauth_echo_1.js'),
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

  /** The plugin called `name` when it is loaded already (no I/O, no await), else undefined. */
  loaded(name: string): FlowPlugin | undefined {
    return this.cache.get(name)
  }

  /** The plugin called `name`; FLOW_PLUGIN_MISSING names it (never a path) when there is none. */
  async get(name: string): Promise<FlowPlugin> {
    const known = this.loaded(name)
    if (known) return known
    const builtIn = BUILT_IN.get(name)
    if (builtIn) return this.load(name, () => builtIn().then((m) => m.default))
    // Names come from sanitized fields only, so a name can never climb out of the folder.
    const file =
      NAME.test(name) && this.dir
        ? EXTENSIONS.map((ext) => join(this.dir!, name + ext)).find((f) => existsSync(f))
        : undefined
    if (!file) throw brokerError('pluginMissing', { plugin: name })
    return this.load(name, () => loadPlugin(file, name))
  }

  /** One load of `name` however many requests ask at once; kept once it succeeds. */
  private async load(name: string, from: () => Promise<FlowPlugin>): Promise<FlowPlugin> {
    let loading = this.loading.get(name)
    if (!loading) this.loading.set(name, (loading = from()))
    const plugin = await loading
    this.cache.set(name, plugin)
    this.loading.delete(name)
    return plugin
  }

  /** Every plugin name available: built-ins plus what is loaded. */
  names(): string[] {
    return [...new Set([...BUILT_IN.keys(), ...this.cache.keys()])]
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
    // Loaded only now: a worker whose plugins load never needs it (nor the child_process it imports).
    const { lineText, syntaxErrorPlace } = await import('../../../util/source-position.js')
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
