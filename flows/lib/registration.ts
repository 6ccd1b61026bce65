import { FlowError, type FlowContext, type FlowRecord, type Registration, type RegistrationGrant } from '../contract.js'
import type { Endpoints } from './oidc.js'
import { parseBody, providerError } from './token-answer.js'

/** What registering needs of a step's context (or of /store's io). */
export type RegisterIo = Pick<FlowContext, 'record' | 'callbackUrl' | 'http' | 'registrations'>

/** The client fields a registration puts into a flow's record (and a flow's saved data). */
export interface ClientFields {
  client_id: string
  client_secret?: string
  client_auth: string
}

/** Whether the record will have the broker register a client: it names none. */
export const registers = (record: Readonly<FlowRecord>): boolean =>
  record.client_id === undefined || record.client_id === ''

/** Why a record without client_id cannot work at this authorization server, as `{client_id: message}`. */
export function clientIdProblem(record: Readonly<FlowRecord>, e: Endpoints): Record<string, string> {
  if (!registers(record) || e.registration) return {}
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
const SECRET_METHODS = ['client_secret_basic', 'client_secret_post', 'client_secret_jwt'] as const

/** The method to register a client credentials client with; undefined when the server lists no secret method. */
function secretMethod(e: Endpoints): string | undefined {
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

/**
 * The client this flow uses: none when the record names its own `client_id`; else the broker's
 * registration at the issuer for its callback URL and `grant` (RFC 7591; the code flow by default),
 * kept in the store and shared by every instance, registering anew when none is kept or it expired —
 * unless `keptOnly` (a refresh: its token belongs to the client it was issued to, and a new client
 * could not use it).
 */
export async function registeredClient(
  io: RegisterIo,
  e: Endpoints,
  { keptOnly = false, grant = 'authorization_code' }: { keptOnly?: boolean; grant?: RegistrationGrant } = {},
): Promise<ClientFields | undefined> {
  if (!registers(io.record)) return undefined
  const [field, problem] = Object.entries(ownEndpointProblems(io.record))[0] ?? []
  if (field) throw new FlowError({ brokerCode: 'VALIDATION', description: `The record's ${field} ${problem}` })
  if (!e.registration || !e.issuer)
    throw new FlowError({
      brokerCode: 'VALIDATION',
      description: 'The record has no client_id and the server offers no registration',
    })
  if (!io.registrations)
    throw new FlowError({ brokerCode: 'FAILED', description: 'This broker keeps no client registrations' })
  const kept = await io.registrations.get(e.issuer, io.callbackUrl, grant)
  if (!kept && keptOnly)
    throw new FlowError({ brokerCode: 'VALIDATION', description: `The record's client_id ${noKeptClient(e.issuer)}` })
  const registration = kept ?? (await register(io, e, grant))
  return clientFields(registration)
}

const noKeptClient = (issuer: string) =>
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
  return (await io.registrations.get(e.issuer, io.callbackUrl)) ? {} : { client_id: noKeptClient(e.issuer) }
}

/** A registered client's fields, ready to lay over the record. */
export function clientFields(kept: Registration): ClientFields {
  const secret = kept.client_secret
  const method = kept.token_endpoint_auth_method ?? (secret ? 'client_secret_basic' : 'none')
  return {
    client_id: kept.client_id,
    ...(secret ? { client_secret: secret } : {}),
    client_auth: secret ? method : 'none',
  }
}

/** The step's context with a registered client laid over its record (unchanged without one). */
export const withClient = <C extends { record: Readonly<FlowRecord> }>(ctx: C, client: ClientFields | undefined): C =>
  client ? { ...ctx, record: { ...ctx.record, ...client } } : ctx

/**
 * Runs a token request of a registered client; an `invalid_client` answer drops the kept
 * registration of that `grant` (when it is still that client), so the next flow registers again.
 */
export async function droppingInvalid<T>(
  io: RegisterIo,
  e: Endpoints,
  client: ClientFields | undefined,
  call: () => Promise<T>,
  grant: RegistrationGrant = 'authorization_code',
): Promise<T> {
  try {
    return await call()
  } catch (err) {
    if (client && err instanceof FlowError && err.oauthError === 'invalid_client' && e.issuer && io.registrations) {
      const kept = await io.registrations.get(e.issuer, io.callbackUrl, grant)
      if (kept?.client_id === client.client_id) await io.registrations.drop(e.issuer, io.callbackUrl, grant)
    }
    throw err
  }
}

/** The registration answer's fields the broker keeps, and the most characters it keeps of each. */
const KEPT_FIELDS = ['client_id', 'client_secret', 'token_endpoint_auth_method', 'registration_access_token'] as const
const MAX_KEPT_FIELD = 4096
/** The methods a registered client can authenticate with: the broker holds at most a client_secret. */
const USABLE_METHODS: readonly string[] = ['none', ...SECRET_METHODS]

/**
 * RFC 7591 §3.1: registers the broker's callback as a code-flow client, or (`client_credentials`) a
 * confidential client of that grant alone, without redirect URIs; keeps the answer.
 */
async function register(io: RegisterIo, e: Endpoints, grant: RegistrationGrant): Promise<Registration> {
  const r = io.record
  const name = typeof r.client_name === 'string' && r.client_name ? r.client_name : 'broker'
  const codeFlow = grant === 'authorization_code'
  const method = codeFlow ? (e.authMethods?.includes('none') ? 'none' : 'client_secret_basic') : secretMethod(e)
  if (!method) throw new FlowError({ brokerCode: 'VALIDATION', description: clientCredentialsProblem(r, e).client_id! })
  const metadata = codeFlow
    ? {
        redirect_uris: [io.callbackUrl],
        client_name: name,
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: method,
      }
    : { client_name: name, grant_types: ['client_credentials'], response_types: [], token_endpoint_auth_method: method }
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
  // 1e400 parses to Infinity: no date, so no expiry (the store keeps it registration.ttl at most anyway).
  const given = fields.client_secret_expires_at
  const expires = typeof given === 'number' && Number.isFinite(given) ? given : 0
  const registration: Registration = {
    client_id: clientId,
    client_secret: text(fields.client_secret),
    token_endpoint_auth_method: text(fields.token_endpoint_auth_method) ?? method,
    registration_access_token: text(fields.registration_access_token),
    client_secret_expires_at: expires,
  }
  await io.registrations!.put(e.issuer!, io.callbackUrl, registration, expires > 0 ? expires * 1000 : undefined, grant)
  return registration
}

/** What the app gets besides the token answer: the `resource` it named, the client_id the broker registered, the user's profile. */
export function withResource(
  deliver: Record<string, unknown>,
  record: Readonly<FlowRecord>,
  client: ClientFields | undefined,
  profile?: Record<string, unknown>,
): Record<string, unknown> {
  const out = { ...deliver }
  if (typeof record.resource === 'string') out.resource = record.resource
  if (client) out.client_id = client.client_id
  if (profile) out.profile = profile
  // The app's own state stays last, as deliverable puts it.
  if (record.state !== undefined) {
    delete out.state
    out.state = record.state
  }
  return out
}
