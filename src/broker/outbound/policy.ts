import { lookup as dnsLookup } from 'node:dns/promises'
import { urlParts } from '../../../flows/lib/urls.js'
import type { BrokerConfig } from '../../config/schema.js'
import { isLoopbackListen } from '../../config/runtime.js'
import { type AddressClass, classifyAddress } from '../../config/addresses.js'

/** Record fields that name a provider URL: checked against the policy at /store. Add new ones here. */
export const PROVIDER_URL_FIELDS: string[] = [
  'authorize_url',
  'access_url',
  'request_url',
  'verify_url',
  'issuer',
  'jwks_uri',
  'par_url',
  'device_authorization_url',
  'resource',
  'profile_url',
]

/** One resolved address, as dns.lookup gives it with `all: true`. */
export interface Resolved {
  address: string
  family: number
}

/** Resolves a host name to every address it has (dns.lookup by default; a stub in tests). */
export type Resolver = (hostname: string) => Promise<Resolved[]>

/** Where the broker may send requests to providers; compiled once per process. */
export interface ProviderPolicy {
  /** Whether a URL may be named at all: anything under providers.allow when it is set, else any http(s) URL. */
  allows(url: string): boolean
  /** Whether an address may be connected to for `hostname` (the name the URL gave, resolved to `address`). */
  permits(hostname: string, address: string): boolean
  /** Whether providers.allow is set. */
  readonly listed: boolean
  readonly resolve: Resolver
}

interface Entry {
  /** Exact origin (`https://host:port`), or undefined for a host pattern. */
  origin?: string
  /** Path prefix under the origin; '/' for the whole origin. */
  path: string
  /** Exact host name, or the suffix `.example.com` of a `*.example.com` pattern. */
  host: string
  wildcard: boolean
}

function compileEntry(text: string): Entry {
  if (/^https?:\/\//i.test(text)) {
    const u = urlParts(text)
    if (!u) throw new Error(`"${text}" is not a URL`)
    return { origin: u.origin, path: u.pathname, host: u.hostname, wildcard: false }
  }
  const host = text.toLowerCase().replace(/:\d+$/, '')
  if (host.startsWith('*.')) return { path: '/', host: host.slice(1), wildcard: true }
  return { path: '/', host: urlParts(`http://${host}`)?.hostname ?? host, wildcard: false }
}

const hostMatches = (e: Entry, hostname: string): boolean =>
  e.wildcard ? hostname.endsWith(e.host) && hostname.length > e.host.length : hostname === e.host

/**
 * The policy of a config: providers.allow compiled once (origins, URL prefixes on a path boundary,
 * `*.example.com` patterns). Without a list any public address is a destination; loopback and
 * private ones only while the broker itself listens on loopback (a developer's machine) or when
 * the list names their host; link-local, metadata, unspecified, multicast and broadcast addresses
 * never.
 */
export function compilePolicy(
  config: Pick<BrokerConfig, 'listen' | 'providers'>,
  opts: { resolve?: Resolver } = {},
): ProviderPolicy {
  const entries = (config.providers.allow ?? []).map(compileEntry)
  const internalOk = isLoopbackListen(config.listen)
  const named = (hostname: string) => entries.some((e) => hostMatches(e, hostname))
  return {
    listed: entries.length > 0,
    resolve: opts.resolve ?? ((hostname) => dnsLookup(hostname, { all: true, verbatim: true })),
    allows(url) {
      const u = urlParts(url)
      if (!u || (u.protocol !== 'http:' && u.protocol !== 'https:') || !u.hostname) return false
      if (!entries.length) return true
      return entries.some((e) => {
        if (e.origin === undefined) return hostMatches(e, u.hostname)
        if (e.origin !== u.origin) return false
        if (e.path === '/') return true
        return u.pathname === e.path || u.pathname.startsWith(e.path.endsWith('/') ? e.path : `${e.path}/`)
      })
    },
    permits(hostname, address) {
      const kind: AddressClass = classifyAddress(address)
      if (kind === 'public') return true
      if (kind === 'internal') return internalOk || named(hostname)
      // Forbidden: never, listed or not (the config loader refuses a list that names one).
      return false
    },
  }
}

// Set once per process when the broker is created; until then (unit tests of flows) a developer's policy.
let current: ProviderPolicy = compilePolicy({ listen: '127.0.0.1', providers: {} })

/** Makes `policy` the one every provider request and /store check uses. */
export function setProviderPolicy(policy: ProviderPolicy): void {
  current = policy
}

/** The policy in force. */
export function providerPolicy(): ProviderPolicy {
  return current
}
