import { FlowError, type HttpAnswer, type Registration } from '../../contract.js'
import { BoundedCache } from '../bounded-cache.js'
import { endpointRequest } from '../client-auth.js'
import type { Endpoints } from '../oidc/index.js'
import { randomPool } from '../random.js'
import { parseBody } from '../token-answer.js'
import { urlParts } from '../urls.js'
import { clientFields, type RegisterIo } from './fields.js'

// A kept client the server answered for is not asked about again for registration.recheck seconds: a
// busy broker would otherwise probe per flow. At most MAX_KNOWN clients (issuer and client_id) are remembered.
const MAX_KNOWN = 256
const known = new BoundedCache<true>(MAX_KNOWN)

/**
 * Whether the authorization server still knows a client the broker registered there: RFC 7592's read of
 * its registration when the answer gave `registration_client_uri` (on the registration endpoint's
 * origin), else a token request with a code nobody issued, which a server answers `invalid_client` for a
 * client it does not know and `invalid_grant` (or another error) for one it does (RFC 6749 §5.2).
 * Anything else — a timeout, an odd answer — counts as known: the flow goes on as before.
 */
export async function stillKnown(io: RegisterIo, e: Endpoints, kept: Registration, redirect: string): Promise<boolean> {
  const id = `${e.issuer}\0${kept.client_id}`
  if (known.get(id)) return true
  let answer: HttpAnswer
  try {
    const uri = kept.registration_client_uri
    const sameOrigin = uri && e.registration && urlParts(uri)?.origin === urlParts(e.registration)?.origin
    if (sameOrigin && kept.registration_access_token) {
      answer = await io.http(uri, {
        headers: { accept: 'application/json', authorization: `Bearer ${kept.registration_access_token}` },
      })
      if ([401, 403, 404].includes(answer.status)) return false
    } else {
      if (!e.token) return true
      const probe = { ...io.record, ...clientFields(kept), token_params: undefined }
      const request = await endpointRequest(
        probe,
        {
          grant_type: 'authorization_code',
          code: `broker-probe-${randomPool(16).toString('base64url')}`,
          redirect_uri: redirect,
          code_verifier: randomPool(32).toString('base64url'),
        },
        { audience: e.issuer ?? e.token, supported: e.authMethods },
      )
      answer = await io.http(e.token, { method: 'POST', ...request })
      const body = parseBody(answer)
      if (body?.error === 'invalid_client' || (answer.status === 401 && !body?.error)) return false
    }
  } catch (err) {
    if (err instanceof FlowError) return true
    throw err
  }
  remember(e.issuer!, kept, io.registrations!.recheckSeconds)
  return true
}

/** Marks a client as known to its server for `seconds` (none: 0, every flow asks). */
export function remember(issuer: string, client: Registration, seconds: number): void {
  if (seconds > 0) known.set(`${issuer}\0${client.client_id}`, true, seconds * 1000)
}
