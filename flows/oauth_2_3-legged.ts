import { FlowError, type FlowContext, type FlowPlugin, type FlowRecord, type StepResult } from './contract.js'
import { clientAuthProblems } from './lib/client-auth.js'
import { authorizeRedirect, checkIssuer, pushedRedirect, withDpop } from './lib/authorization.js'
import { dpopProblems, flowDpop, wantsDpop } from './lib/dpop/index.js'
import { checkIdToken } from './lib/id-token.js'
import { deliverable, requestToken } from './lib/oauth2.js'
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
import { fetchProfile, wantsProfile } from './lib/profile.js'
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

export default plugin
