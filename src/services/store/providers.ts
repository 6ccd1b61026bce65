import { catalogue } from '../../broker/providers/catalogue.js'

/** One provider of the catalogue, as `broker store --list-providers` shows it. */
export interface ProviderInfo {
  name: string
  title?: string
  oauth: 1 | 2
  /** The fields the provider fills: URLs (with `[subdomain]` when it needs one) and a preset's extras. */
  record: Record<string, unknown>
  /** True when the record must give `subdomain`. */
  subdomain: boolean
  scope_separator: string
  /** grant: Grant's catalogue; preset: the broker's fixtures/providers; grant+preset: both. */
  source: string
  /** The preset's profile endpoint, used with `profile: true`. */
  profile_url?: string
  /** The preset says its clients have a secret the provider requires: `broker store` asks for it. */
  confidential?: boolean
}

export interface ProviderList {
  providers: ProviderInfo[]
}

/** `broker store --list-providers`: every provider a record may name with `provider` or `--flow`. */
export function listProviders(): ProviderList {
  return {
    providers: [...catalogue().values()].map((e) => ({
      name: e.name,
      ...(e.title ? { title: e.title } : {}),
      oauth: e.oauth,
      record: { ...e.record },
      subdomain: e.subdomain,
      scope_separator: e.scope_separator,
      source: e.source,
      ...(e.profile_url ? { profile_url: e.profile_url } : {}),
      ...(e.confidential ? { confidential: true } : {}),
    })),
  }
}

/** One line per provider: name, OAuth version, what it needs, its authorization URL. */
export function renderProviders(list: ProviderList): string {
  const width = Math.max(...list.providers.map((p) => p.name.length))
  const lines = list.providers.map((p) => {
    const needs = p.subdomain ? 'subdomain' : ''
    return `  ${p.name.padEnd(width)}  OAuth ${p.oauth}  ${needs.padEnd(9)}  ${String(p.record.authorize_url ?? p.record.access_url)}`
  })
  return [
    ...lines,
    '',
    `${list.providers.length} providers. Store one with: broker store --flow <name> --client-id … (--subdomain … where it says so).`,
  ].join('\n')
}
