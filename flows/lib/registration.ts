import {
  FlowError,
  type FlowContext,
  type FlowRecord,
  type HttpAnswer,
  type Registration,
  type RegistrationGrant,
} from '../contract.js'
import { createHash } from 'node:crypto'
import { BoundedCache } from './bounded-cache.js'
import { endpointRequest } from './client-auth.js'
import type { Endpoints } from './oidc.js'
import { randomPool } from './random.js'
import { discoversFromResource } from './resource.js'
import { parseBody, providerError } from './token-answer.js'
import { isHttpUrl, urlParts } from './urls.js'

/** What registering needs of a step's context (or of /store's io). */
export type RegisterIo = Pick<FlowContext, 'record' | 'callbackUrl' | 'http' | 'registrations'>

/** The client fields a registration puts into a flow's record (and a flow's saved data). */
export interface ClientFields {
  client_id: string
  client_secret?: string
  client_auth: string
  /** The code flow client's redirect URI: the broker's callback URL for this issuer alone (issuerRedirect). */
  redirect_uri?: string
  /** No flow has used it yet: its first successful token request confirms it (confirmUse). */
  unused?: true
}

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

/** Whether the record will have the broker register a client: it names none. */
export const registers = (record: Readonly<FlowRecord>): boolean =>
  record.client_id === undefined || record.client_id === ''

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
 * could not use it). With `check` (the default; /store passes false, /start sends the browser), a kept
 * code-flow client is first confirmed with the server (stillKnown), and registered again if it forgot it.
 */
export async function registeredClient(
  io: RegisterIo,
  e: Endpoints,
  {
    keptOnly = false,
    grant = 'authorization_code',
    check = true,
  }: { keptOnly?: boolean; grant?: RegistrationGrant; check?: boolean } = {},
): Promise<ClientFields | undefined> {
  if (!registers(io.record)) return undefined
  const [field, problem] = Object.entries(ownEndpointProblems(io.record))[0] ?? []
  if (field) throw new FlowError({ brokerCode: 'VALIDATION', description: `The record's ${field} ${problem}` })
  if ((!e.registration && !usesDocument(e, io.callbackUrl)) || !e.issuer)
    throw new FlowError({
      brokerCode: 'VALIDATION',
      description: 'The record has no client_id and the server offers no registration',
    })
  if (!io.registrations)
    throw new FlowError({ brokerCode: 'FAILED', description: 'This broker keeps no client registrations' })
  const [foreign] = Object.values(foreignAuthorizeProblem(io.record, e))
  if (foreign) throw new FlowError({ description: `The authorization endpoint ${foreign}` })
  // A client ID metadata document: nothing to register or keep, the server fetches the broker's document.
  if (grant === 'authorization_code' && usesDocument(e, io.callbackUrl))
    return {
      client_id: documentUrl(io.callbackUrl, e.issuer),
      client_auth: 'none',
      redirect_uri: issuerRedirect(io.callbackUrl, e.issuer),
    }
  const redirect = redirectFor(io.callbackUrl, e.issuer, grant)
  let kept = await io.registrations.get(e.issuer, redirect, grant)
  if (!kept && keptOnly)
    throw new FlowError({ brokerCode: 'VALIDATION', description: `The record's client_id ${noKeptClient(e.issuer)}` })
  // Before a browser goes to the server with a kept client: does the server still know it? Servers that
  // keep their clients in memory forget them on a restart, and every flow then stopped at their
  // /authorize (400 invalid_client, the app never told) until the registration lapsed, a day later.
  if (kept && check && grant === 'authorization_code' && !keptOnly && !(await stillKnown(io, e, kept, redirect))) {
    await io.registrations.drop(e.issuer, redirect, grant)
    kept = undefined
  }
  const registration = kept ?? (await register(io, e, grant, redirect))
  // Just registered: the server knows it, for as long as a check would be trusted.
  if (!kept && grant === 'authorization_code') remember(e.issuer, registration, io.registrations.recheckSeconds)
  const fields = clientFields(registration)
  return grant === 'authorization_code' ? { ...fields, redirect_uri: redirect } : fields
}

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
async function stillKnown(io: RegisterIo, e: Endpoints, kept: Registration, redirect: string): Promise<boolean> {
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
function remember(issuer: string, client: Registration, seconds: number): void {
  if (seconds > 0) known.set(`${issuer}\0${client.client_id}`, true, seconds * 1000)
}

/** The redirect URI a registration is kept under: the code flow's per issuer; client credentials have none of their own. */
const redirectFor = (callbackUrl: string, issuer: string, grant: RegistrationGrant): string =>
  grant === 'authorization_code' ? issuerRedirect(callbackUrl, issuer) : callbackUrl

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

/** A registered client's fields, ready to lay over the record. */
export function clientFields(kept: Registration): ClientFields {
  const secret = kept.client_secret
  const method = kept.token_endpoint_auth_method ?? (secret ? 'client_secret_basic' : 'none')
  return {
    client_id: kept.client_id,
    ...(secret ? { client_secret: secret } : {}),
    client_auth: secret ? method : 'none',
    ...(kept.unused ? { unused: true as const } : {}),
  }
}

/**
 * After a registered client's first successful token request: the registration is kept its whole
 * lifetime from now. Until then it lives briefly (a record refused later, a browser that never came
 * back: nothing keeps a client nobody uses for a day).
 */
export async function confirmUse(
  io: Pick<RegisterIo, 'callbackUrl' | 'registrations'>,
  e: Endpoints,
  client: ClientFields | undefined,
  grant: RegistrationGrant = 'authorization_code',
): Promise<void> {
  if (!client?.unused || !e.issuer || !io.registrations) return
  await io.registrations.confirm(e.issuer, redirectFor(io.callbackUrl, e.issuer, grant), grant)
}

/** The step's context with a registered client laid over its record (unchanged without one). */
export function withClient<C extends { record: Readonly<FlowRecord> }>(ctx: C, client: ClientFields | undefined): C {
  if (!client) return ctx
  const { redirect_uri: _, unused: __, ...fields } = client
  return { ...ctx, record: { ...ctx.record, ...fields } }
}

/**
 * Runs a token request of a registered client; an `invalid_client` answer drops the kept
 * registration of that `grant` (when it is still that client), so the next flow registers again —
 * only for a request the broker built alone: a record with `token_params` shapes the request too, and
 * one app could otherwise drop the client every app shares.
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
    const own = io.record.token_params === undefined
    if (
      client &&
      own &&
      err instanceof FlowError &&
      err.oauthError === 'invalid_client' &&
      e.issuer &&
      io.registrations
    ) {
      const redirect = redirectFor(io.callbackUrl, e.issuer, grant)
      const kept = await io.registrations.get(e.issuer, redirect, grant)
      if (kept?.client_id === client.client_id) await io.registrations.drop(e.issuer, redirect, grant)
    }
    throw err
  }
}

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
async function register(
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

/**
 * What the app gets besides the token answer: the `resource` it named, the authorization server that
 * issued the tokens (when the broker found it from the resource), the client_id the broker registered,
 * the user's profile.
 */
export function withResource(
  deliver: Record<string, unknown>,
  record: Readonly<FlowRecord>,
  client: ClientFields | undefined,
  profile?: Record<string, unknown>,
  issuer?: string,
): Record<string, unknown> {
  const out = { ...deliver }
  if (typeof record.resource === 'string') out.resource = record.resource
  if (issuer) out.issuer = issuer
  if (client) out.client_id = client.client_id
  if (profile) out.profile = profile
  // The app's own state stays last, as deliverable puts it.
  if (record.state !== undefined) {
    delete out.state
    out.state = record.state
  }
  return out
}
