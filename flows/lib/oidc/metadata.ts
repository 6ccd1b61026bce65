import { FlowError, type FlowContext } from '../../contract.js'
import { BoundedCache } from '../bounded-cache.js'
import { readProviderJson } from '../provider-json.js'

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

// Metadata changes rarely and every flow of an issuer reads it at /store, /start and /callback:
// kept per issuer for METADATA_TTL_MS, at most MAX_ISSUERS of them. A caller cannot evict another's
// issuer: when the cache is full of entries still fresh, a new issuer is read but not kept.
const METADATA_TTL_MS = 10 * 60_000
const MAX_ISSUERS = 256
/** Each issuer's metadata as discover read it (endpoints.ts reads it without I/O). */
export const metadataCache = new BoundedCache<ProviderMetadata>(MAX_ISSUERS)

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
