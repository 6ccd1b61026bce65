import { FlowError, type FlowRecord, type Registration, type RegistrationGrant } from '../../contract.js'
import type { Endpoints } from '../oidc/index.js'
import { parseBody, providerError } from '../token-answer.js'
import { isHttpUrl } from '../urls.js'
import type { RegisterIo } from './fields.js'
import { SECRET_METHODS, clientCredentialsProblem, secretMethod } from './problems.js'

/**
 * The scope a code-flow client registers with: what the flow will ask for (the record's, else the
 * protected resource's), less any scope the server's `scopes_supported` does not list (a server with
 * resource indicators, such as oidc-provider, refuses a registration naming a resource's own scope).
 */
function scopeOf(r: Readonly<FlowRecord>, e: Endpoints): string | undefined {
  const asked = typeof r.scope === 'string' && r.scope ? r.scope : e.scope
  if (!asked || !e.scopes) return asked
  const listed = asked.split(/\s+/).filter((s) => e.scopes!.includes(s))
  return listed.length ? listed.join(' ') : undefined
}

/** The registration answer's fields the broker keeps, and the most characters it keeps of each. */
const KEPT_FIELDS = [
  'client_id',
  'client_secret',
  'token_endpoint_auth_method',
  'registration_access_token',
  'registration_client_uri',
] as const
const MAX_KEPT_FIELD = 4096
/** The methods a registered client can authenticate with: the broker holds at most a client_secret. */
const USABLE_METHODS: readonly string[] = ['none', ...SECRET_METHODS]

/**
 * RFC 7591 §3.1: registers the broker's callback as a code-flow client, or (`client_credentials`) a
 * confidential client of that grant alone, without redirect URIs; keeps the answer.
 */
export async function register(
  io: RegisterIo,
  e: Endpoints,
  grant: RegistrationGrant,
  redirect: string,
): Promise<Registration> {
  const r = io.record
  // The name every user of this shared client consents to is the deployment's, never one record's.
  const name = io.registrations!.clientName
  const codeFlow = grant === 'authorization_code'
  const method = codeFlow ? (e.authMethods?.includes('none') ? 'none' : 'client_secret_basic') : secretMethod(e)
  if (!method) throw new FlowError({ brokerCode: 'VALIDATION', description: clientCredentialsProblem(r, e).client_id! })
  const metadata = codeFlow
    ? {
        redirect_uris: [redirect],
        client_name: name,
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: method,
        // The scope the flow will ask for (RFC 7591 §2), as the MCP SDK's client registers it.
        ...(scopeOf(r, e) ? { scope: scopeOf(r, e) } : {}),
      }
    : { client_name: name, grant_types: ['client_credentials'], response_types: [], token_endpoint_auth_method: method }
  // Bounded per host: a hostile server's thousand issuer paths are a thousand registrations otherwise.
  await io.registrations!.admitNew(e.issuer!)
  const answer = await io.http(e.registration!, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify(metadata),
  })
  const fields = parseBody(answer)
  const failure = fields && providerError(fields, answer.status)
  if (failure)
    throw new FlowError({ description: `The client registration at ${e.issuer} was refused: ${failure.description}` })
  const clientId = fields?.client_id
  if ((answer.status !== 201 && answer.status !== 200) || typeof clientId !== 'string' || !clientId)
    throw new FlowError({
      description: `The client registration at ${e.issuer} answered ${answer.status} without a client_id`,
    })
  // What is kept is bounded: a server answering a client_id of most of a megabyte would have every flow
  // at it carry that much, and the kept registrations grow the store by as much per issuer.
  const long = KEPT_FIELDS.find((f) => typeof fields[f] === 'string' && fields[f].length > MAX_KEPT_FIELD)
  if (long)
    throw new FlowError({
      description: `The client registration at ${e.issuer} answered a ${long} of ${String(fields[long]).length} characters (at most ${MAX_KEPT_FIELD})`,
    })
  const text = (v: unknown) => (typeof v === 'string' && v ? v : undefined)
  // The server may change the method asked for (§3.2.1), but only to one the broker can use with what
  // it holds: private_key_jwt (no key) failed every flow at that server, for as long as it was kept.
  const answered = text(fields.token_endpoint_auth_method)
  if (answered !== undefined && !USABLE_METHODS.includes(answered))
    throw new FlowError({
      description: `The client registration at ${e.issuer} answered token_endpoint_auth_method ${answered.slice(0, 40)}, which the broker cannot authenticate with (it holds only a client_secret)`,
    })
  // Client credentials authenticate the client itself: a client without a secret could get no token.
  if (!codeFlow && !text(fields.client_secret))
    throw new FlowError({
      description: `The client registration at ${e.issuer} for client_credentials answered without a client_secret`,
    })
  // A client_id this broker keeps at another server: that server's client, claimed by this one to have
  // its user's code sent here (a mix-up through registration). Nothing is kept.
  const owner = await io.registrations!.owner(clientId)
  if (owner !== undefined && owner !== e.issuer)
    throw new FlowError({
      description: `The client registration at ${e.issuer} answered a client_id this broker keeps for another authorization server: refused (a mix-up through registration)`,
    })
  // 1e400 parses to Infinity: no date, so no expiry (the store keeps it registration.ttl at most anyway).
  const given = fields.client_secret_expires_at
  const expires = typeof given === 'number' && Number.isFinite(given) ? given : 0
  const registration: Registration = {
    client_id: clientId,
    client_secret: text(fields.client_secret),
    token_endpoint_auth_method: text(fields.token_endpoint_auth_method) ?? method,
    registration_access_token: text(fields.registration_access_token),
    registration_client_uri: isHttpUrl(text(fields.registration_client_uri) ?? '')
      ? text(fields.registration_client_uri)
      : undefined,
    client_secret_expires_at: expires,
    unused: true,
  }
  await io.registrations!.put(e.issuer!, redirect, registration, expires > 0 ? expires * 1000 : undefined, grant)
  return registration
}
