import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** One provider a record may name with `provider`: what the broker fills in for it. */
export interface CatalogueEntry {
  readonly name: string
  readonly title?: string
  /** Which OAuth the provider speaks. */
  readonly oauth: 1 | 2
  /**
   * Record fields the provider fills when the record leaves them out: its URLs (with `[subdomain]`
   * placeholders), and from the broker's presets client_auth, signature_method, authorize_params, pkce …
   */
  readonly record: Readonly<Record<string, unknown>>
  /** How the provider joins scopes (Grant's default is a comma). */
  readonly scope_separator: string
  /** Where the entry comes from: Grant's catalogue, the broker's own preset on top of it, or the preset alone. */
  readonly source: 'grant' | 'grant+preset' | 'preset'
  /** True when a URL needs the record's `subdomain`. */
  readonly subdomain: boolean
  /** `record` without the fields that need a subdomain: copied into a record in one spread. */
  readonly fixed: Readonly<Record<string, unknown>>
  /** The preset's profile endpoint, for a provider without OpenID userinfo: a record's `profile_url` when it asks for `profile`. */
  readonly profile_url?: string
  /** The preset says the provider's clients have a secret it requires (GitHub, Google …): the CLI asks for it. */
  readonly confidential?: boolean
}

export const SUBDOMAIN = '[subdomain]'

let loaded: ReadonlyMap<string, CatalogueEntry> | undefined

/**
 * Every provider the broker knows: Grant's `config/oauth.json` (MIT, read from the installed
 * package, ~200 providers), with the broker's presets (fixtures/providers) on top. Read once, the
 * first time a record names a provider; a record without one never loads it.
 */
export function catalogue(): ReadonlyMap<string, CatalogueEntry> {
  return (loaded ??= build(readGrant(), readPresets()))
}

/** Whether the catalogue has been read (it is read only once a record names a provider). */
export const catalogueLoaded = (): boolean => loaded !== undefined

interface GrantProvider {
  authorize_url?: unknown
  access_url?: unknown
  request_url?: unknown
  oauth?: unknown
  scope_delimiter?: unknown
}

interface Preset {
  title?: string
  flow?: string
  record?: Record<string, unknown>
  authorize_params?: Record<string, string>
  scope_separator?: string
  pkce?: boolean
  profile_url?: string
  confidential?: boolean
}

const URL_FIELDS = ['request_url', 'authorize_url', 'access_url'] as const

function build(grant: Record<string, GrantProvider>, presets: Record<string, Preset>): Map<string, CatalogueEntry> {
  const out = new Map<string, CatalogueEntry>()
  for (const [name, g] of Object.entries(grant)) {
    if (g.oauth !== 1 && g.oauth !== 2) continue
    const record: Record<string, unknown> = {}
    for (const f of URL_FIELDS) if (typeof g[f] === 'string') record[f] = g[f]
    if (!record.access_url) continue
    const separator = typeof g.scope_delimiter === 'string' ? g.scope_delimiter : ','
    out.set(name, entry(name, g.oauth, record, separator, 'grant'))
  }
  for (const [name, p] of Object.entries(presets)) {
    const base = out.get(name)
    const oauth = p.flow?.startsWith('oauth1') ? 1 : p.flow?.startsWith('oauth2') ? 2 : (base?.oauth ?? 2)
    // Grant's URLs only when the preset speaks the same OAuth (the broker's "x" is X's OAuth 1.0a).
    const same = base && base.oauth === oauth
    const record: Record<string, unknown> = { ...(same ? base.record : {}), ...p.record }
    if (p.authorize_params && Object.keys(p.authorize_params).length) record.authorize_params = p.authorize_params
    if (p.pkce === false) record.pkce = false
    const separator = p.scope_separator ?? (same ? base.scope_separator : ' ')
    const made = entry(name, oauth, record, separator, same ? 'grant+preset' : 'preset', p.title)
    const extra = {
      ...(typeof p.profile_url === 'string' ? { profile_url: p.profile_url } : {}),
      ...(p.confidential === true ? { confidential: true } : {}),
    }
    out.set(name, Object.keys(extra).length ? Object.freeze({ ...made, ...extra }) : made)
  }
  return new Map([...out].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
}

function entry(
  name: string,
  oauth: 1 | 2,
  record: Record<string, unknown>,
  scope_separator: string,
  source: CatalogueEntry['source'],
  title?: string,
): CatalogueEntry {
  const needs = (v: unknown) => typeof v === 'string' && v.includes(SUBDOMAIN)
  const fixed = Object.freeze(Object.fromEntries(Object.entries(record).filter(([, v]) => !needs(v))))
  const subdomain = Object.values(record).some(needs)
  return Object.freeze({ name, title, oauth, record: Object.freeze(record), scope_separator, source, subdomain, fixed })
}

function readGrant(): Record<string, GrantProvider> {
  const path = fileURLToPath(import.meta.resolve('grant/config/oauth.json'))
  return JSON.parse(readFileSync(path, 'utf8')) as Record<string, GrantProvider>
}

function readPresets(): Record<string, Preset> {
  const dir = presetDir()
  if (!dir) return {}
  const out: Record<string, Preset> = {}
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.json'))) {
    out[basename(file, '.json')] = JSON.parse(readFileSync(join(dir, file), 'utf8')) as Preset
  }
  return out
}

/** fixtures/providers under the package root, from src/ (tests) or dist/src/ alike. */
function presetDir(): string | undefined {
  for (let dir = import.meta.dirname; ; dir = dirname(dir)) {
    const candidate = join(dir, 'fixtures', 'providers')
    if (existsSync(candidate)) return candidate
    if (dirname(dir) === dir) return undefined
  }
}
