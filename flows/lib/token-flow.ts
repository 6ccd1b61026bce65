import type { FlowContext, FlowRecord, StoreIo } from '../contract.js'
import { clientAuthProblems } from './client-auth.js'
import { type DpopKey, dpopProblems, flowDpop } from './dpop/index.js'
import { checkIdToken } from './id-token.js'
import { deliverable, requestToken } from './oauth2.js'
import { cachedEndpoints, checkedEndpoints, endpointProblems, endpoints, metadataFieldProblems } from './oidc/index.js'
import { clientIdProblem } from './registration/index.js'
import { discoversFromResource } from './resource.js'

/**
 * /store checks shared by the flows that only call the token endpoint (client credentials, refresh,
 * password): client authentication, `access_url` or an `issuer` to discover it from.
 */
export async function tokenFlowProblems(record: Readonly<FlowRecord>, io: StoreIo): Promise<Record<string, string>> {
  const problems = { ...(await clientAuthProblems(record)), ...metadataFieldProblems(record), ...dpopProblems(record) }
  if (Object.keys(problems).length) return problems
  const discovers = record.issuer !== undefined || discoversFromResource(record)
  if (!discovers && record.access_url === undefined)
    return { access_url: 'is required (or an issuer or resource to discover it from)' }
  const e = discovers ? await endpoints(record, io.http) : cachedEndpoints(record)!
  return {
    ...endpointProblems(record, e, { authorize: false }, io.allowed),
    ...dpopProblems(record, e.dpopAlgs),
    ...clientIdProblem(record, e),
  }
}

/**
 * One token request with `params` at the record's (or its issuer's) token endpoint, delivered as
 * the app gets it; an id_token in the answer (a refresh with openid) is verified when the broker
 * knows the provider's keys. With the DPoP key the token is bound to (a later request with the token proves it).
 */
export async function tokenAnswer(
  ctx: FlowContext,
  params: Record<string, string>,
): Promise<{ deliver: Record<string, unknown>; dpop?: DpopKey }> {
  const e = await checkedEndpoints(ctx.record, ctx)
  const dpop = await flowDpop(ctx.record, ctx.data, e.dpopAlgs)
  const token = await requestToken(ctx, params, {
    url: e.token!,
    audience: e.issuer ?? e.token,
    authMethods: e.authMethods,
    dpop: dpop?.key,
  })
  const verified = await checkIdToken(ctx, token, e)
  const deliver = deliverable(token, ctx.record)
  if (dpop?.made) deliver.dpop_jwk = dpop.made
  return { deliver: verified === undefined ? deliver : { ...deliver, id_token_verified: verified }, dpop: dpop?.key }
}
