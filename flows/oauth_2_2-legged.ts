import { FlowError, type FlowContext, type FlowPlugin, type FlowRecord, type StepResult } from './contract.js'
import { checkedEndpoints, endpoints } from './lib/oidc/index.js'
import { checkSameIdentity, originalIdTokenProblems } from './lib/identity.js'
import { fetchProfile, wantsProfile } from './lib/profile.js'
import {
  clientCredentialsProblem,
  confirmUse,
  droppingInvalid,
  keptClientProblem,
  ownEndpointProblems,
  refreshIssuerProblem,
  registeredClient,
  registers,
  withClient,
  withResource,
} from './lib/registration/index.js'
import { tokenAnswer, tokenFlowProblems } from './lib/token-flow.js'

/**
 * OAuth 2 without the user: client credentials (RFC 6749 §4.4) by default, or the record's
 * `grant_type` — `refresh_token` with its `refresh_token` field included. A `resource` is named
 * (RFC 8707); without a `client_id`, client credentials use a confidential client the broker registers
 * for that grant alone (RFC 7591), and a refresh the code flow's client the broker registered
 * (refused at /store when none is kept: a refresh never registers one); any other grant needs a
 * `client_id`; a
 * refresh carrying the login's `id_token` must get an id_token of the same identity (OIDC Core §12.2).
 */
const plugin: FlowPlugin = {
  description: 'OAuth 2 client credentials (2-legged), or the record grant_type such as refresh_token',
  // client_id: required in validate, unless the broker registered its own client.

  async validate(record: Readonly<FlowRecord>, io) {
    const problems: Record<string, string> = {}
    if (record.grant_type === 'refresh_token' && !record.refresh_token)
      problems.refresh_token = 'is required when grant_type is refresh_token'
    if (record.grant_type === 'authorization_code')
      problems.grant_type = 'authorization_code needs the 3-legged flow (auth_leg 3)'
    Object.assign(problems, originalIdTokenProblems(record))
    if (Object.keys(problems).length) return problems
    const all = await tokenFlowProblems(record, io)
    if (Object.keys(all).length) return all
    // A refresh by resource: only to the server whose tokens the broker delivered for it, client_id or not.
    const issuerProblem =
      grantOf(record) === 'refresh_token'
        ? await refreshIssuerProblem(record, await endpoints(record, io.http), io)
        : {}
    if (Object.keys(issuerProblem).length || !registers(record)) return issuerProblem
    const own = ownEndpointProblems(record)
    if (Object.keys(own).length) return own
    const e = await endpoints(record, io.http)
    // A refresh with no client_id uses the client the broker registered, and never registers one.
    if (grantOf(record) === 'refresh_token') return keptClientProblem(record, e, io)
    if (grantOf(record) !== 'client_credentials')
      return {
        client_id: `is required for grant_type ${String(record.grant_type).slice(0, 100)}: the broker registers its own client only for client_credentials and the code flow`,
      }
    const problem = clientCredentialsProblem(record, e)
    // A server that refuses the registration is refused now (502), not at /start, as in the code flow.
    if (!Object.keys(problem).length && io.callbackUrl && io.registrations)
      await registeredClient(
        { record, http: io.http, callbackUrl: io.callbackUrl, registrations: io.registrations },
        e,
        { grant: 'client_credentials' },
      )
    return problem
  },

  async start(ctx: FlowContext): Promise<StepResult> {
    const r = ctx.record
    const grant = grantOf(r)
    // The metadata's URLs (registration, userinfo) checked again, as tokenAnswer does (providers.allow).
    const e = await checkedEndpoints(r, ctx)
    // Checked again: what the resource names may have changed since /store.
    const [field, problem] = Object.entries(await refreshIssuerProblem(r, e, ctx))[0] ?? []
    if (field) throw new FlowError({ brokerCode: 'VALIDATION', description: `The record's ${field} ${problem}` })
    const params: Record<string, string> = { grant_type: grant }
    if (grant === 'refresh_token') params.refresh_token = String(r.refresh_token)
    // Client credentials without a scope ask for the resource's (RFC 9728); a refresh keeps the scope it was granted.
    const scope = r.scope ?? (grant === 'client_credentials' ? e.scope : undefined)
    if (scope) params.scope = String(scope)
    if (e.resource) params.resource = e.resource
    // Validated at /store: without a client_id, the grant is client credentials or a refresh.
    const kind = grant === 'client_credentials' ? 'client_credentials' : 'authorization_code'
    const client = await registeredClient(ctx, e, { keptOnly: grant === 'refresh_token', grant: kind })
    const cctx = withClient(ctx, client)
    const { deliver, dpop } = await droppingInvalid(ctx, e, client, () => tokenAnswer(cctx, params), kind)
    await confirmUse(ctx, e, client, kind)
    if (grant === 'refresh_token' && typeof r.id_token === 'string')
      checkSameIdentity(r.id_token, deliver.id_token, String(cctx.record.client_id ?? ''))
    const profile = wantsProfile(r) ? await fetchProfile(cctx, deliver, e, dpop) : undefined
    return { deliver: withResource(deliver, r, client, profile) }
  },
}

/** The record's grant: its `grant_type`, client credentials when it names none. */
const grantOf = (r: Readonly<FlowRecord>): string =>
  typeof r.grant_type === 'string' && r.grant_type ? r.grant_type : 'client_credentials'

export default plugin
