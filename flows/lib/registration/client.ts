import { FlowError, type RegistrationGrant } from '../../contract.js'
import type { Endpoints } from '../oidc/index.js'
import { type ClientFields, type RegisterIo, clientFields } from './fields.js'
import { remember, stillKnown } from './known.js'
import { foreignAuthorizeProblem, noKeptClient, ownEndpointProblems, registers } from './problems.js'
import { documentUrl, issuerRedirect, redirectFor, usesDocument } from './redirect.js'
import { register } from './register.js'

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
