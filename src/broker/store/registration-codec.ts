import type { Registration } from '../../../flows/contract.js'

/**
 * A kept client registration (RFC 7591), under `reg:{name}` (keys.ts): the version tag `r1`, then
 * the sealed JSON `{client_id, client_secret?, token_endpoint_auth_method?, registration_access_token?,
 * client_secret_expires_at?}`. The secrets never leave the seal; the key expires with the registration.
 */
const VERSION = 'r1'

/** The stored value of a registration, given the function that seals its JSON. */
export function encodeRegistration(registration: Registration, seal: (json: string) => string): string {
  const { client_id, client_secret, token_endpoint_auth_method, registration_access_token, client_secret_expires_at } =
    registration
  const json = JSON.stringify({
    client_id,
    client_secret,
    token_endpoint_auth_method,
    registration_access_token,
    client_secret_expires_at,
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
