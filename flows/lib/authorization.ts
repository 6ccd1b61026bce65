import { FlowError, type FlowContext, type StepResult } from '../contract.js'
import { type DpopKey, flowDpop } from './dpop/index.js'
import { wantsOpenId } from './id-token.js'
import { extraParams, pkcePair, wantsPkce } from './oauth2.js'
import type { Endpoints } from './oidc/index.js'
import { pushAuthorizationRequest } from './par.js'
import { randomPool } from './random.js'
import { setQuery, urlParts } from './urls.js'

/**
 * The code flow's front channel: the authorization request the browser carries (in the query, or
 * pushed first, RFC 9126) with what the flow keeps of it, and the check of the response's issuer (RFC 9207).
 */

/** What DPoP adds to the authorization request (RFC 9449 §10): `dpop_jkt`, and the key the broker made, to keep. */
export interface DpopStart {
  key?: DpopKey
  save?: Record<string, unknown>
}

/** The flow's DPoP key for the authorization request, when the record asks for DPoP. */
export async function withDpop(ctx: FlowContext, e: Endpoints): Promise<DpopStart> {
  const dpop = await flowDpop(ctx.record, ctx.data, e.dpopAlgs)
  return dpop ? { key: dpop.key, save: dpop.made ? { dpop_jwk: dpop.made } : undefined } : {}
}

/** The authorization request's parameters, and what this flow keeps of them (PKCE verifier, nonce, DPoP key). */
function authorizeParams(
  ctx: FlowContext,
  e: Endpoints,
  dpop: DpopStart,
): {
  fixed: Record<string, string>
  own: Record<string, string>
  save: Record<string, unknown>
} {
  const r = ctx.record
  // What is the same for every flow of this app, then what is this flow's own.
  const fixed: Record<string, string> = {
    ...extraParams(r.authorize_params),
    client_id: String(r.client_id),
    redirect_uri: ctx.callbackUrl,
    response_type: 'code',
  }
  const scope = r.scope ?? e.scope
  if (scope) fixed.scope = String(scope)
  // The resource indicator (RFC 8707): the record's, or what its metadata names (Endpoints.resource).
  if (e.resource) fixed.resource = e.resource
  // As the MCP SDK's client does: a refresh token (offline_access) needs the user's consent where the
  // server can be asked for it (OpenID Connect Core §11), unless the app chose its own prompt.
  if (/(^|\s)offline_access(\s|$)/.test(fixed.scope ?? '') && e.prompts?.includes('consent') && !fixed.prompt)
    fixed.prompt = 'consent'
  const own: Record<string, string> = { state: ctx.state }
  // Whether this is OpenID Connect is the scope actually sent: `openid` may come through
  // authorize_params as well as through `scope`, and then too the id_token must carry this flow's nonce.
  const save: Record<string, unknown> = { ...dpop.save }
  if (dpop.key) own.dpop_jkt = dpop.key.jkt
  if (wantsPkce(r)) {
    const { verifier, challenge } = pkcePair()
    own.code_challenge = challenge
    own.code_challenge_method = 'S256'
    save.code_verifier = verifier
  }
  if (wantsOpenId(fixed.scope)) {
    // OpenID Connect Core §3.1.2.1: a nonce binds the id_token to this flow (`nonce` in data is the cookie's).
    own.nonce = randomPool(24).toString('base64url')
    save.oidc_nonce = own.nonce
  }
  return { fixed, own, save }
}

/** The authorization request as a redirect carrying it in the query (RFC 6749 §4.1.1). */
export function authorizeRedirect(ctx: FlowContext, e: Endpoints, dpop: DpopStart): StepResult {
  const { fixed, own, save } = authorizeParams(ctx, e, dpop)
  return { redirect: setQuery(e.authorize!, fixed, own), await: ctx.state, save }
}

/** RFC 9126: the request goes to the PAR endpoint; the browser carries only client_id and request_uri. */
export async function pushedRedirect(ctx: FlowContext, e: Endpoints, dpop: DpopStart): Promise<StepResult> {
  if (!e.par)
    throw new FlowError({ brokerCode: 'VALIDATION', description: 'The record asks for PAR but names no par_url' })
  const { fixed, own, save } = authorizeParams(ctx, e, dpop)
  const requestUri = await pushAuthorizationRequest(
    ctx,
    e.par,
    { ...fixed, ...own },
    { audience: e.issuer ?? e.token!, supported: e.authMethods, dpop: dpop.key },
  )
  const redirect = setQuery(e.authorize!, { client_id: fixed.client_id! }, { request_uri: requestUri })
  return { redirect, await: ctx.state, save }
}

/**
 * RFC 9207 (mix-up defence): an `iss` in the authorization response, or one the issuer's metadata
 * promises, must be the record's issuer, else the code is not redeemed at all.
 */
export function checkIssuer(iss: string | undefined, e: Endpoints): void {
  if (iss === undefined) {
    if (e.issAlways)
      throw new FlowError({
        oauthError: 'invalid_request',
        description: `The authorization response has no iss, though ${e.issuer} always sends it`,
      })
    return
  }
  // No issuer to compare with: the response must at least come from where the user was sent.
  if (e.issuer === undefined && e.authorize !== undefined && urlParts(iss)?.origin !== urlParts(e.authorize)?.origin) {
    throw new FlowError({
      oauthError: 'invalid_request',
      description: `The authorization response comes from issuer "${iss.slice(0, 200)}", not from the origin of authorize_url ${urlParts(e.authorize)?.origin ?? ''}: the code was not redeemed`,
    })
  }
  if (e.issuer !== undefined && iss !== e.issuer) {
    throw new FlowError({
      oauthError: 'invalid_request',
      description: `The authorization response comes from issuer "${iss.slice(0, 200)}", not from ${e.issuer}: the code was not redeemed`,
    })
  }
}
