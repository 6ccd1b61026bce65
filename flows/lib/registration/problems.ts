import type { FlowRecord } from '../../contract.js'
import type { Endpoints } from '../oidc/index.js'
import { discoversFromResource } from '../resource.js'
import { urlParts } from '../urls.js'
import type { RegisterIo } from './fields.js'
import { issuerRedirect, usesDocument } from './redirect.js'

/** Whether the record will have the broker register a client: it names none. */
export const registers = (record: Readonly<FlowRecord>): boolean =>
  record.client_id === undefined || record.client_id === ''

/**
 * Why the broker will not register its own client at this server, as `{authorize_url: message}`: its
 * metadata sends the user to an authorization endpoint on another origin than the issuer's. The user
 * would sign in at that other server with the client this one registers (a client_id it chose), and
 * its code would come back here: a mix-up. A record naming its own client_id decides for itself.
 */
export function foreignAuthorizeProblem(record: Readonly<FlowRecord>, e: Endpoints): Record<string, string> {
  if (!registers(record) || !e.issuer || !e.authorize || record.authorize_url !== undefined) return {}
  const at = urlParts(e.authorize)?.origin
  if (at === undefined || at === urlParts(e.issuer)?.origin) return {}
  return {
    authorize_url: `is refused for a client the broker registers: the metadata of ${e.issuer.slice(0, 200)} names an authorization_endpoint on another origin (${at.slice(0, 200)}), where the user would sign in with a client this server chose (a mix-up, RFC 9700 §4.4); give a client_id of your own to use it`,
  }
}

/** Why a record without client_id cannot work at this authorization server, as `{client_id: message}`. */
export function clientIdProblem(
  record: Readonly<FlowRecord>,
  e: Endpoints,
  callbackUrl?: string,
): Record<string, string> {
  if (!registers(record) || e.registration || (e.cimd && callbackUrl && usesDocument(e, callbackUrl))) return {}
  if (e.cimd)
    return {
      client_id: `is required: ${e.issuer ?? 'the server'} takes only client ID metadata documents, whose URL must be https, and this broker is served over http (set protocol: https behind TLS)`,
    }
  return {
    client_id: e.issuer
      ? `is required: ${e.issuer} offers no dynamic client registration (no registration_endpoint)`
      : 'is required',
  }
}

/** The record's endpoints that would receive the client's credentials (its secret, or an assertion made with it). */
const CREDENTIAL_ENDPOINTS = ['access_url', 'par_url'] as const

/**
 * Why a record without `client_id` may not name its own token or PAR endpoint, as `{field: message}`:
 * the broker's registered client is the issuer's, and its secret goes only to the issuer's own
 * endpoints (its metadata's). A record naming another one had the secret sent there.
 */
export function ownEndpointProblems(record: Readonly<FlowRecord>): Record<string, string> {
  if (!registers(record)) return {}
  const problems: Record<string, string> = {}
  for (const field of CREDENTIAL_ENDPOINTS)
    if (record[field] !== undefined)
      problems[field] =
        `is not taken without a client_id: the broker registers its own client at the issuer and sends its secret only to the issuer's own endpoints; give a client_id to use your own ${field}`
  return problems
}

/** How a client registered for client credentials authenticates: the first secret method the server lists. */
export const SECRET_METHODS = ['client_secret_basic', 'client_secret_post', 'client_secret_jwt'] as const

/** The method to register a client credentials client with; undefined when the server lists no secret method. */
export function secretMethod(e: Endpoints): string | undefined {
  if (!e.authMethods?.length) return 'client_secret_basic'
  return SECRET_METHODS.find((m) => e.authMethods!.includes(m))
}

/**
 * Why the broker cannot register a client for client credentials at this server, as
 * `{client_id: message}`: such a client has a secret, and the server lists no method to send one.
 */
export function clientCredentialsProblem(record: Readonly<FlowRecord>, e: Endpoints): Record<string, string> {
  if (!registers(record) || secretMethod(e)) return {}
  return {
    client_id: `is required: ${e.issuer ?? 'the server'} lists no client_secret_basic, client_secret_post or client_secret_jwt for a client the broker would register for client_credentials`,
  }
}

/** Why a refresh without client_id cannot go on: the broker keeps no client it registered at `issuer`. */
export const noKeptClient = (issuer: string) =>
  `is required for a refresh: this broker keeps no client it registered at ${issuer} (it expired or was never made), and a refresh token works only for the client it was issued to; give the client_id delivered with the tokens`

/**
 * /store's check of a refresh without `client_id`: the broker must still keep the client it
 * registered at the issuer (it will not register a new one for a refresh), as `{client_id: message}`.
 */
export async function keptClientProblem(
  record: Readonly<FlowRecord>,
  e: Endpoints,
  io: Partial<Pick<RegisterIo, 'callbackUrl' | 'registrations'>>,
): Promise<Record<string, string>> {
  if (!registers(record) || !e.issuer || !e.registration || !io.registrations || !io.callbackUrl) return {}
  if (usesDocument(e, io.callbackUrl)) return {}
  const kept = await io.registrations.get(e.issuer, issuerRedirect(io.callbackUrl, e.issuer))
  return kept ? {} : { client_id: noKeptClient(e.issuer) }
}

/**
 * Why a refresh that finds its authorization server from a protected resource alone may not go
 * there, as `{field: message}`: a refresh token goes only to the server that issued it, and what a
 * resource names may change (a hostile MCP server names another server once it has tokens to take).
 * The server is the one whose tokens for this resource the broker delivered (bindResource); with none,
 * the app names it (`issuer`, delivered with the tokens).
 */
export async function refreshIssuerProblem(
  record: Readonly<FlowRecord>,
  e: Endpoints,
  io: Partial<Pick<RegisterIo, 'callbackUrl' | 'registrations'>>,
): Promise<Record<string, string>> {
  if (record.grant_type !== 'refresh_token' || !discoversFromResource(record) || !e.issuer) return {}
  if (!io.registrations || !io.callbackUrl) return {}
  const resource = String(record.resource)
  const bound = await io.registrations.resourceIssuer(resource, io.callbackUrl)
  if (bound === undefined)
    return {
      issuer: `is required for a refresh by resource here: this broker delivered no tokens for ${resource.slice(0, 200)} it could tell the authorization server of; give the issuer delivered with the tokens (a refresh token goes only to the server that issued it)`,
    }
  if (bound === e.issuer) return {}
  return {
    resource: `names the authorization server ${e.issuer.slice(0, 200)} now, but this broker's tokens for it came from ${bound.slice(0, 200)}: a refresh token goes only to the server that issued it; give issuer ${bound.slice(0, 200)} (delivered with the tokens) to refresh there`,
  }
}
