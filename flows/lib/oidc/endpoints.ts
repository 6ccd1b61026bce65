import type { FlowContext, FlowRecord } from '../../contract.js'
import { cachedResource, discoverResource, discoversFromResource, type ProtectedResource } from '../resource.js'
import { discover, metadataCache, type ProviderMetadata } from './metadata.js'

type Http = FlowContext['http']

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

/** Whether a record field reads as true ("true", "1", "yes", "on" from forms). */
export const flag = (v: unknown): boolean => v === true || (typeof v === 'string' && /^(true|1|yes|on)$/i.test(v))

/** A record or metadata field as text, when it is non-empty text. */
export const text = (v: unknown): string | undefined => (typeof v === 'string' && v ? v : undefined)

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
