import { FlowError, type FlowContext, type FlowPlugin, type FlowRecord, type StepResult } from './contract.js'
import { clientAuthProblems } from './lib/client-auth.js'
import { type DpopKey, dpopProblems, flowDpop, wantsDpop } from './lib/dpop.js'
import { checkIdToken, wantsOpenId } from './lib/id-token.js'
import { deliverable, extraParams, pkcePair, requestToken, wantsPkce } from './lib/oauth2.js'
import {
  cachedEndpoints,
  checkedEndpoints,
  discovers,
  endpointProblems,
  endpoints,
  metadataFieldProblems,
  pinEndpoints,
  pinnedEndpoints,
  usable,
  type Endpoints,
} from './lib/oidc/index.js'
import { pushAuthorizationRequest } from './lib/par.js'
import { fetchProfile, wantsProfile } from './lib/profile.js'
import { randomPool } from './lib/random.js'
import {
  clientIdProblem,
  confirmUse,
  droppingInvalid,
  foreignAuthorizeProblem,
  ownEndpointProblems,
  registeredClient,
  registers,
  withClient,
  withResource,
  type ClientFields,
} from './lib/registration/index.js'
import { discoversFromResource } from './lib/resource.js'
import { setQuery, urlParts } from './lib/urls.js'

/**
 * OAuth 2 authorization code grant (RFC 6749 §4.1), with PKCE S256 unless the record says `pkce: false`;
 * OpenID Connect (nonce, id_token verified) with scope `openid`; the provider's endpoints discovered
 * from `issuer`; the authorization request pushed (RFC 9126) with `par` or when the issuer requires it;
 * the authorization response's `iss` checked against the issuer (RFC 9207) before the code is redeemed;
 * a `resource` named (RFC 8707), its authorization server discovered from it alone (RFC 9728), and
 * the broker's own client registered there when the record names none (RFC 7591).
 */
const plugin: FlowPlugin = {
  description: 'OAuth 2 authorization code (3-legged), PKCE S256, OpenID Connect, PAR',
  // client_id: required in validate, unless the broker registers its own client.
  // The first step needs no I/O unless it pushes the request or reads a registration: then it runs
  // at /start, since a request_uri lives about a minute (RFC 9126 §2.2) and a flow may wait far longer.
  startAtStore: (record) => !registers(record) && cachedEndpoints(record)?.usePar === false,

  async validate(record: Readonly<FlowRecord>, io) {
    const problems = {
      ...(await clientAuthProblems(record)),
      ...metadataFieldProblems(record),
      ...dpopProblems(record),
    }
    if (Object.keys(problems).length) return problems
    const discovered = discovers(record)
    if (!discovered) {
      for (const field of ['authorize_url', 'access_url'])
        if (record[field] === undefined) problems[field] = 'is required (or an issuer or resource to discover it from)'
    }
    // Discovery at /store: a bad issuer is refused now, and the metadata is cached for /start.
    const e = discovered ? await endpoints(record, io.http) : cachedEndpoints(record)!
    const all = {
      ...endpointProblems(record, e, { authorize: true }, io.allowed),
      ...dpopProblems(record, e.dpopAlgs),
      ...clientIdProblem(record, e, io.callbackUrl),
      ...foreignAuthorizeProblem(record, e),
      ...ownEndpointProblems(record),
      ...problems,
    }
    // A server that refuses the registration is refused now (502), not at /start.
    if (!Object.keys(all).length && io.callbackUrl && io.registrations)
      await registeredClient(
        { record, http: io.http, callbackUrl: io.callbackUrl, registrations: io.registrations },
        e,
        // /start confirms a kept client with the server just before it sends the browser there.
        { check: false },
      )
    return all
  },

  start(ctx: FlowContext): StepResult | Promise<StepResult> {
    const known = cachedEndpoints(ctx.record)
    // Without discovery, a push, DPoP or a registration, the step stays synchronous: it runs at /store for every such flow.
    if (known && !known.usePar && !wantsDpop(ctx.record) && !registers(ctx.record))
      return pinned(ctx.record, authorizeRedirect(ctx, usable(ctx.record, known, ctx.allowed), {}), known)
    return checkedEndpoints(ctx.record, ctx).then(async (e) => {
      const dpop = await withDpop(ctx, e)
      // The registered client is the flow's from here on: /callback redeems the code as the client it was issued to.
      const client = await registeredClient(ctx, e)
      // A registered client's redirect URI is its issuer's own (issuerRedirect): the code comes back there.
      const cctx = client?.redirect_uri ? { ...withClient(ctx, client), callbackUrl: client.redirect_uri } : ctx
      const step = e.usePar ? await pushedRedirect(cctx, e, dpop) : authorizeRedirect(cctx, e, dpop)
      if (!client || !('redirect' in step)) return pinned(ctx.record, step, e)
      const save = { ...step.save, client, ...(client.redirect_uri ? { redirect_uri: client.redirect_uri } : {}) }
      return pinned(ctx.record, { ...step, save }, e)
    })
  },

  async callback(ctx: FlowContext): Promise<StepResult> {
    const r = ctx.record
    const { code } = ctx.params
    if (!code)
      throw new FlowError({
        oauthError: 'invalid_request',
        description: 'The provider sent no authorization code to the callback',
      })
    // Where /start sent the user, as it was then: a resource or metadata that names another server
    // now gets nothing of this flow (the code, the verifier, the client's secret).
    const kept = pinnedEndpoints(ctx.data)
    const e = kept ? usable(r, kept, ctx.allowed) : await checkedEndpoints(r, ctx)
    checkIssuer(ctx.params.iss, e)
    const params: Record<string, string> = {
      grant_type: 'authorization_code',
      code,
      // The redirect URI of the authorization request (RFC 6749 §4.1.3): a registered client's is its issuer's own.
      redirect_uri: typeof ctx.data.redirect_uri === 'string' ? ctx.data.redirect_uri : ctx.callbackUrl,
    }
    if (typeof ctx.data.code_verifier === 'string') params.code_verifier = ctx.data.code_verifier
    if (e.resource) params.resource = e.resource
    const client = ctx.data.client as ClientFields | undefined
    const cctx = withClient(ctx, client)
    const dpop = await flowDpop(r, ctx.data, e.dpopAlgs)
    const token = await droppingInvalid(ctx, e, client, () =>
      requestToken(cctx, params, {
        url: e.token!,
        audience: e.issuer ?? e.token,
        authMethods: e.authMethods,
        dpop: dpop?.key,
      }),
    )
    const nonce = typeof ctx.data.oidc_nonce === 'string' ? ctx.data.oidc_nonce : undefined
    const verified = await checkIdToken(cctx, token, e, nonce)
    const profile = wantsProfile(r) ? await fetchProfile(cctx, token, e, dpop?.key) : undefined
    // Tokens of a protected resource name the server that issued them: a refresh goes there alone.
    await confirmUse(ctx, e, client)
    const issuer = discoversFromResource(r) ? e.issuer : undefined
    if (issuer) await ctx.registrations?.bindResource(String(r.resource), ctx.callbackUrl, issuer)
    const deliver = withResource(deliverable(token, r, ctx.params), r, client, profile, issuer)
    if (dpop?.made) deliver.dpop_jwk = dpop.made
    if (verified === undefined) return { deliver }
    return { deliver: { ...deliver, id_token_verified: verified }, save: { id_token_verified: verified } }
  },
}

/** The step with the endpoints it used kept in the flow's data, when they came from discovery (pinEndpoints). */
function pinned(record: Readonly<FlowRecord>, step: StepResult, e: Endpoints): StepResult {
  if (!('redirect' in step) || !discovers(record)) return step
  return { ...step, save: { ...step.save, endpoints: pinEndpoints(e) } }
}

/** What DPoP adds to the authorization request (RFC 9449 §10): `dpop_jkt`, and the key the broker made, to keep. */
interface DpopStart {
  key?: DpopKey
  save?: Record<string, unknown>
}

async function withDpop(ctx: FlowContext, e: Endpoints): Promise<DpopStart> {
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

function authorizeRedirect(ctx: FlowContext, e: Endpoints, dpop: DpopStart): StepResult {
  const { fixed, own, save } = authorizeParams(ctx, e, dpop)
  return { redirect: setQuery(e.authorize!, fixed, own), await: ctx.state, save }
}

/** RFC 9126: the request goes to the PAR endpoint; the browser carries only client_id and request_uri. */
async function pushedRedirect(ctx: FlowContext, e: Endpoints, dpop: DpopStart): Promise<StepResult> {
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
function checkIssuer(iss: string | undefined, e: Endpoints): void {
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

export default plugin
