import type { Registration } from '../../../flows/contract.js'

/**
 * A kept client registration (RFC 7591), under `reg:{name}` (keys.ts): the version tag `r1`, then
 * the sealed JSON `{client_id, client_secret?, token_endpoint_auth_method?, registration_access_token?,
 * registration_client_uri?, client_secret_expires_at?, unused?}` (`unused`: no flow has used it yet). The secrets never leave the seal; the key expires with the registration.
 */
const VERSION = 'r1'

/** The stored value of a registration, given the function that seals its JSON. */
export function encodeRegistration(registration: Registration, seal: (json: string) => string): string {
  const {
    client_id,
    client_secret,
    token_endpoint_auth_method,
    registration_access_token,
    registration_client_uri,
    client_secret_expires_at,
    unused,
  } = registration
  const json = JSON.stringify({
    client_id,
    client_secret,
    token_endpoint_auth_method,
    registration_access_token,
    registration_client_uri,
    client_secret_expires_at,
    unused,
  })
  return `${VERSION}${seal(json)}`
}

/** A stored registration, or undefined when it is of another format or does not open. */
export function decodeRegistration(
  value: unknown,
  open: (sealed: string) => string | undefined,
): Registration | undefined {
  if (typeof value !== 'string' || !value.startsWith(VERSION)) return undefined
  const json = open(value.slice(VERSION.length))
  if (json === undefined) return undefined
  try {
    const parsed = JSON.parse(json) as Registration
    return typeof parsed.client_id === 'string' && parsed.client_id ? parsed : undefined
  } catch {
    return undefined
  }
}

/**
 * A link the broker keeps beside its registrations, under `reg:{name}` too (named by a keyed digest
 * of what it links): the version tag `l1`, then the sealed JSON `{issuer}`. Two kinds: which
 * authorization server a registered `client_id` belongs to, and which one issued the tokens of a
 * protected resource (RFC 9728) this broker delivered. Neither is readable in a dump.
 */
const LINK_VERSION = 'l1'

/** The stored value of a link to `issuer`, given the function that seals its JSON. */
export function encodeLink(issuer: string, seal: (json: string) => string): string {
  return `${LINK_VERSION}${seal(JSON.stringify({ issuer }))}`
}

/** A stored link's issuer, or undefined when it is of another format or does not open. */
export function decodeLink(value: unknown, open: (sealed: string) => string | undefined): string | undefined {
  if (typeof value !== 'string' || !value.startsWith(LINK_VERSION)) return undefined
  const json = open(value.slice(LINK_VERSION.length))
  if (json === undefined) return undefined
  try {
    const { issuer } = JSON.parse(json) as { issuer?: unknown }
    return typeof issuer === 'string' && issuer ? issuer : undefined
  } catch {
    return undefined
  }
}
