import { FlowError, type FlowContext, type FlowRecord } from '../contract.js'
import { BoundedCache } from './bounded-cache.js'
import { readProviderJson } from './provider-json.js'
import { cachedResource, discoverResource, discoversFromResource, type ProtectedResource } from './resource.js'
import { isHttpUrl } from './urls.js'

type Http = FlowContext['http']

/** What the broker reads of an issuer's metadata (OpenID Connect Discovery 1.0, RFC 8414, RFC 9126, RFC 9207). */
export interface ProviderMetadata {
  issuer: string
  authorization_endpoint?: string
  token_endpoint?: string
  jwks_uri?: string
  pushed_authorization_request_endpoint?: string
  require_pushed_authorization_requests?: boolean
  token_endpoint_auth_methods_supported?: string[]
  authorization_response_iss_parameter_supported?: boolean
  dpop_signing_alg_values_supported?: string[]
  device_authorization_endpoint?: string
  registration_endpoint?: string
  userinfo_endpoint?: string
  prompt_values_supported?: string[]
  scopes_supported?: string[]
  client_id_metadata_document_supported?: boolean
}

/** A record's provider as the flow uses it: explicit record fields first, then the issuer's metadata. */
export interface Endpoints {
  issuer?: string
  authorize?: string
  token?: string
  jwks?: string
  par?: string
  /** The device authorization endpoint (RFC 8628 §3.1). */
  device?: string
  /** Push the authorization request (RFC 9126): the record's `par`, else the metadata's requirement. */
  usePar: boolean
  /** The authorization response always carries `iss` (RFC 9207 metadata). */
  issAlways: boolean
  /** The token endpoint's client authentication methods, when the metadata lists them. */
  authMethods?: readonly string[]
  /** The algorithms the server accepts DPoP proofs signed with (RFC 9449 §5.1), when the metadata lists them. */
  dpopAlgs?: readonly string[]
  /** Dynamic client registration (RFC 7591), when the metadata offers it. */
  registration?: string
  /** Where the user's profile is: the record's `profile_url`, else the metadata's `userinfo_endpoint`. */
  userinfo?: string
  /** The scope a protected resource asks for (RFC 9728), for a record that names none. */
  scope?: string
  /**
   * The resource indicator to send (RFC 8707): the record's `resource`, or what its protected resource
   * metadata names (a same-origin prefix); undefined when none is sent (no metadata says the server takes one).
   */
  resource?: string
  /** The `prompt` values the server lists (OpenID Connect Discovery's `prompt_values_supported`). */
  prompts?: readonly string[]
  /** The scopes the server lists (`scopes_supported`), when it does. */
  scopes?: readonly string[]
  /** The server takes a client_id that is the URL of a client metadata document (draft-ietf-oauth-client-id-metadata-document). */
  cimd?: boolean
}

// Metadata changes rarely and every flow of an issuer reads it at /store, /start and /callback:
// kept per issuer for METADATA_TTL_MS, at most MAX_ISSUERS of them. A caller cannot evict another's
// issuer: when the cache is full of entries still fresh, a new issuer is read but not kept.
const METADATA_TTL_MS = 10 * 60_000
const MAX_ISSUERS = 256
const metadataCache = new BoundedCache<ProviderMetadata>(MAX_ISSUERS)

/** Whether a record field reads as true ("true", "1", "yes", "on" from forms). */
export const flag = (v: unknown): boolean => v === true || (typeof v === 'string' && /^(true|1|yes|on)$/i.test(v))

const text = (v: unknown): string | undefined => (typeof v === 'string' && v ? v : undefined)

/** How an issuer's metadata is looked for: OpenID's first (an `issuer` record), or MCP's order (a resource's server). */
export type DiscoveryOrder = 'openid' | 'mcp'

/**
 * The issuer's metadata, cached per issuer: for an `issuer` record `/.well-known/openid-configuration`
 * first, then RFC 8414's; for an authorization server a protected resource names, the order of the MCP
 * specification (RFC 8414 first). The metadata's `issuer` must be the one asked for, give or take a
 * trailing slash (the MCP SDK's servers write `http://host/`; the metadata's form is used from then on).
 * With `defaults` (an MCP 2025-03-26 server, whose origin is its authorization server), no metadata at
 * all means `/authorize`, `/token` and `/register` on that origin. Throws a FlowError naming the issuer.
 */
export async function discover(
  issuer: string,
  http: Http,
  order: DiscoveryOrder = 'openid',
  defaults = false,
): Promise<ProviderMetadata> {
  const hit = metadataCache.get(issuer)
  if (hit) return hit
  const reasons: string[] = []
  const urls = wellKnownUrls(issuer, order)
  for (const url of urls) {
    const answer = await http(url, { headers: { accept: 'application/json' } })
    if (answer.status !== 200) {
      reasons.push(`${url} answered ${answer.status}`)
      continue
    }
    const meta = readProviderJson(answer.body, `The metadata at ${url}`)
    if (meta === undefined) {
      reasons.push(`${url} answered with a body that is not JSON`)
      continue
    }
    if (!meta || typeof meta !== 'object' || Array.isArray(meta)) {
      reasons.push(`${url} answered with JSON that is not an object`)
      continue
    }
    const value = meta as ProviderMetadata
    // OpenID Discovery §4.3 and RFC 8414 §3.3: the metadata must name the very issuer it was fetched for
    // (an issuer with and without its trailing slash is one server: the SDK writes the slash, users often do not).
    if (!sameIssuer(value.issuer, issuer)) {
      const named = String(value.issuer).slice(0, 200)
      throw new FlowError({
        description: `Discovery for ${issuer} failed: the metadata at ${url} names the issuer "${named}"; give that issuer (in exactly that form) if it is the server you mean`,
      })
    }
    metadataCache.set(issuer, value, METADATA_TTL_MS)
    return value
  }
  if (defaults && urls.every((u) => reasons.includes(`${u} answered 404`))) {
    const origin = new URL(issuer).origin
    const value: ProviderMetadata = {
      issuer,
      authorization_endpoint: `${origin}/authorize`,
      token_endpoint: `${origin}/token`,
      registration_endpoint: `${origin}/register`,
      // Nothing says how the client authenticates: a public client with PKCE (what MCP clients register),
      // and a record's own secret in the body, as the SDK's token endpoint reads it.
      token_endpoint_auth_methods_supported: ['none', 'client_secret_post', 'client_secret_basic'],
    }
    metadataCache.set(issuer, value, METADATA_TTL_MS)
    return value
  }
  throw new FlowError({ description: `Discovery for ${issuer} failed: ${reasons.join('; ')}` })
}

/** Whether the issuer a metadata document names is `issuer`, give or take one trailing slash. */
const sameIssuer = (named: unknown, issuer: string): named is string =>
  typeof named === 'string' && (named === issuer || named === `${issuer}/` || `${named}/` === issuer)

/**
 * The well-known addresses of an issuer's metadata. RFC 8414 §3.1 puts its segment between the host
 * and the issuer's path; OpenID Discovery appends its own to the path, and MCP also tries it inserted.
 * MCP's order (2025-11-25): RFC 8414, then OpenID inserted, then appended (two URLs without a path).
 */
function wellKnownUrls(issuer: string, order: DiscoveryOrder): string[] {
  const u = new URL(issuer)
  const path = u.pathname.replace(/\/$/, '')
  const rfc8414 = `${u.origin}/.well-known/oauth-authorization-server${path}`
  const appended = `${u.origin}${path}/.well-known/openid-configuration`
  const inserted = `${u.origin}/.well-known/openid-configuration${path}`
  const urls = order === 'mcp' ? [rfc8414, inserted, appended] : [appended, rfc8414, inserted]
  return [...new Set(urls)]
}

/** The record's endpoints, discovered from its `issuer` when it has one (cached); explicit fields win. */
export async function endpoints(record: Readonly<FlowRecord>, http: Http): Promise<Endpoints> {
  // A record naming only a protected resource: its authorization server is the issuer (RFC 9728).
  const found = discoversFromResource(record) ? await discoverResource(String(record.resource), http) : undefined
  const issuer = text(record.issuer) ?? found?.issuer
  const meta = issuer ? await discover(issuer, http, found ? 'mcp' : 'openid', found?.legacy === true) : undefined
  return merge(record, meta, found)
}

/**
 * The record's endpoints without I/O: from the record alone, or with its issuer's cached metadata;
 * undefined when the record names an issuer whose metadata is not cached.
 */
export function cachedEndpoints(record: Readonly<FlowRecord>): Endpoints | undefined {
  const found = discoversFromResource(record) ? cachedResource(String(record.resource)) : undefined
  if (discoversFromResource(record) && !found) return undefined
  const issuer = text(record.issuer) ?? found?.issuer
  if (!issuer) return merge(record, undefined)
  const hit = metadataCache.get(issuer)
  return hit ? merge(record, hit, found) : undefined
}

/**
 * The record's endpoints for a flow step: as `endpoints`, with every URL the issuer's metadata gave
 * checked again by the deployment's rules (`allowed`: providers.allow). /store checked them, but
 * the metadata is read again once its cache expires, and it may have changed since: the browser
 * must never be sent to, nor a request made to, a URL the deployment does not allow.
 */
export async function checkedEndpoints(
  record: Readonly<FlowRecord>,
  io: Pick<FlowContext, 'http' | 'allowed'>,
): Promise<Endpoints> {
  return usable(record, await endpoints(record, io.http), io.allowed)
}

/**
 * Endpoints as a flow keeps them with its data: what /start discovered (issuer, endpoints, the
 * resource's scope) is used as is at /callback, never discovered again. A protected resource or an
 * issuer's metadata may name another server by then (a hostile MCP server does, after the first
 * look), and the code, the PKCE verifier and the client's secret must go only where the user was sent.
 */
export const pinEndpoints = (e: Endpoints): Record<string, unknown> => ({ ...e })

/** The endpoints a flow's data kept at /start (pinEndpoints), or undefined when it kept none. */
export function pinnedEndpoints(data: Readonly<Record<string, unknown>>): Endpoints | undefined {
  const kept = data.endpoints
  if (!kept || typeof kept !== 'object' || Array.isArray(kept)) return undefined
  return kept as Endpoints
}

/** Whether a record's endpoints come from discovery (an issuer, or a protected resource): then a flow pins them. */
export const discovers = (record: Readonly<FlowRecord>): boolean =>
  text(record.issuer) !== undefined || discoversFromResource(record)

/** `e` when every URL the metadata gave is allowed; else a PROVIDER_NOT_ALLOWED FlowError naming the first. */
export function usable(record: Readonly<FlowRecord>, e: Endpoints, allowed: (url: string) => boolean): Endpoints {
  for (const [field, problem] of Object.entries(metadataUrlProblems(record, e, allowed)))
    throw new FlowError({ brokerCode: 'PROVIDER_NOT_ALLOWED', description: `The ${field} ${problem}` })
  return e
}

/**
 * An endpoint URL of the metadata as text: null (what some servers write for "none") is absent; any
 * other value that is not text is its JSON, which the URL checks then refuse by name (null and `{}`
 * reached them as they were and failed /store with a 500).
 */
const metaUrl = (v: unknown): string | undefined =>
  v === undefined || v === null ? undefined : typeof v === 'string' ? v : JSON.stringify(v)

function merge(
  record: Readonly<FlowRecord>,
  meta: ProviderMetadata | undefined,
  resource?: ProtectedResource,
): Endpoints {
  return {
    // The metadata's own form of the issuer (it may add the trailing slash the record left out).
    issuer: text(meta?.issuer) ?? text(record.issuer) ?? resource?.issuer,
    authorize: text(record.authorize_url) ?? metaUrl(meta?.authorization_endpoint),
    token: text(record.access_url) ?? metaUrl(meta?.token_endpoint),
    jwks: text(record.jwks_uri) ?? metaUrl(meta?.jwks_uri),
    par: text(record.par_url) ?? metaUrl(meta?.pushed_authorization_request_endpoint),
    device: text(record.device_authorization_url) ?? metaUrl(meta?.device_authorization_endpoint),
    usePar: record.par !== undefined ? flag(record.par) : meta?.require_pushed_authorization_requests === true,
    issAlways: meta?.authorization_response_iss_parameter_supported === true,
    authMethods: Array.isArray(meta?.token_endpoint_auth_methods_supported)
      ? meta.token_endpoint_auth_methods_supported
      : undefined,
    dpopAlgs: Array.isArray(meta?.dpop_signing_alg_values_supported)
      ? meta.dpop_signing_alg_values_supported
      : undefined,
    registration: metaUrl(meta?.registration_endpoint),
    userinfo: text(record.profile_url) ?? metaUrl(meta?.userinfo_endpoint),
    scope: resource?.scope,
    resource: resource ? resource.send : text(record.resource),
    prompts: Array.isArray(meta?.prompt_values_supported) ? meta.prompt_values_supported : undefined,
    scopes: Array.isArray(meta?.scopes_supported) ? meta.scopes_supported : undefined,
    cimd: meta?.client_id_metadata_document_supported === true,
  }
}

/** Problems with a record's OpenID/metadata fields, as `{field: message}`, before any I/O. */
export function metadataFieldProblems(record: Readonly<FlowRecord>): Record<string, string> {
  const problems: Record<string, string> = {}
  for (const field of ['issuer', 'jwks_uri', 'par_url', 'resource', 'profile_url']) {
    if (record[field] !== undefined && !isHttpUrl(String(record[field])))
      problems[field] = 'must be an absolute http(s) URL'
  }
  const issuer = text(record.issuer)
  if (issuer && isHttpUrl(issuer) && (issuer.includes('?') || issuer.includes('#')))
    problems.issuer = 'must have no query or fragment'
  // RFC 8707 §2: a resource indicator is an absolute URI without a fragment.
  if (typeof record.resource === 'string' && isHttpUrl(record.resource) && record.resource.includes('#'))
    problems.resource = 'must have no fragment'
  if (record.profile !== undefined && !/^(true|false|1|0|yes|no|on|off)$/i.test(String(record.profile)))
    problems.profile = 'must be true or false'
  if (record.body_format !== undefined && !['json', 'form'].includes(String(record.body_format)))
    problems.body_format = 'must be json or form'
  return problems
}

/** What the discovered metadata leaves missing or contradicts, as `{field: message}`. */
export function endpointProblems(
  record: Readonly<FlowRecord>,
  e: Endpoints,
  need: { authorize: boolean },
  allowed: (url: string) => boolean,
): Record<string, string> {
  const problems: Record<string, string> = {}
  const from = e.issuer ? ' (neither in the record nor in the issuer metadata)' : ''
  if (need.authorize && !e.authorize) problems.authorize_url = `is required${from}`
  if (!e.token) problems.access_url = `is required${from}`
  if (flag(record.profile) && !e.userinfo)
    problems.profile = `needs a profile_url, or an issuer whose metadata has a userinfo_endpoint${e.issuer ? ` (${e.issuer} has none)` : ''}`
  if (need.authorize && e.usePar && !e.par) problems.par_url = `is required to push authorization requests${from}`
  for (const [field, problem] of Object.entries(metadataUrlProblems(record, e, allowed))) problems[field] ??= problem
  return problems
}

/** The URLs the issuer's metadata gave (not the record's own), each judged by the same rules as a record's URL. */
function metadataUrlProblems(
  record: Readonly<FlowRecord>,
  e: Endpoints,
  allowed: (url: string) => boolean,
): Record<string, string> {
  const problems: Record<string, string> = {}
  for (const [field, url] of [
    ['authorize_url', e.authorize],
    ['access_url', e.token],
    ['jwks_uri', e.jwks],
    ['par_url', e.par],
    // Discovered from a protected resource (RFC 9728), and the registration the flow will use (RFC 7591).
    ['issuer', e.issuer],
    ['registration_endpoint', record.client_id === undefined ? e.registration : undefined],
    ['profile_url', flag(record.profile) ? e.userinfo : undefined],
  ] as const) {
    if (url === undefined || url === text(record[field])) continue
    if (!isHttpUrl(url))
      problems[field] = `must be an absolute http(s) URL; the issuer metadata gives "${String(url).slice(0, 200)}"`
    else if (!allowed(url))
      problems[field] = `is not in providers.allow: the issuer metadata gives ${new URL(url).origin}`
  }
  return problems
}
