import { createHash } from 'node:crypto'
import type { RegistrationGrant } from '../../contract.js'
import type { Endpoints } from '../oidc/index.js'

/**
 * The redirect URI a client the broker registers at `issuer` has: the broker's callback URL with a
 * path segment of that issuer's own (a digest of it), so that a code can only come back for the
 * server it was asked of (RFC 9700 §4.4.2, a mix-up defence): a hostile server that sends the user to
 * another server's authorization endpoint, with that server's client, gets its code sent to that
 * server's redirect URI, where no flow of the hostile server waits.
 */
export function issuerRedirect(callbackUrl: string, issuer: string): string {
  return `${callbackUrl}/${createHash('sha256').update(issuer).digest('base64url').slice(0, 22)}`
}

/**
 * Whether the broker's client at this server is a client ID metadata document (the registration the MCP
 * specification of 2025-11-25 prefers): the server says it takes them, and the broker is served over
 * https (the document's URL is the client_id, and a server fetches only an https one).
 */
export const usesDocument = (e: Endpoints, callbackUrl: string): boolean =>
  e.cimd === true && callbackUrl.startsWith('https://')

/** The URL of the broker's client metadata document for an issuer's redirect URI: `/clients/<its segment>`. */
export function documentUrl(callbackUrl: string, issuer: string): string {
  const segment = issuerRedirect(callbackUrl, issuer).slice(callbackUrl.length + 1)
  return `${callbackUrl.replace(/\/callback$/, '')}/clients/${segment}`
}

/** What the deployment says about its client (registration.clientName, logoUri, clientUri). */
export interface ClientDescription {
  clientName: string
  logoUri?: string
  clientUri?: string
}

/**
 * The broker's client metadata document for one issuer segment (draft-ietf-oauth-client-id-metadata-document
 * §4): its client_id is the document's own URL, its one redirect URI the issuer's own (issuerRedirect), a
 * public client (PKCE) of the code flow.
 */
export function clientDocument(
  callbackUrl: string,
  segment: string,
  about: ClientDescription,
): Record<string, unknown> {
  return {
    client_id: `${callbackUrl.replace(/\/callback$/, '')}/clients/${segment}`,
    client_name: about.clientName,
    redirect_uris: [`${callbackUrl}/${segment}`],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
    ...(about.logoUri ? { logo_uri: about.logoUri } : {}),
    ...(about.clientUri ? { client_uri: about.clientUri } : {}),
  }
}

/** The redirect URI a registration is kept under: the code flow's per issuer; client credentials have none of their own. */
export const redirectFor = (callbackUrl: string, issuer: string, grant: RegistrationGrant): string =>
  grant === 'authorization_code' ? issuerRedirect(callbackUrl, issuer) : callbackUrl
