import {
  FlowError,
  type FlowContext,
  type FlowPlugin,
  type FlowRecord,
  type PollResult,
  type StoreIo,
} from './contract.js'
import { clientAuthProblems, endpointRequest } from './lib/client-auth.js'
import { dpopProblems, flowDpop } from './lib/dpop/index.js'
import { checkIdToken } from './lib/id-token.js'
import { deliverable, parseBody, requestToken } from './lib/oauth2.js'
import {
  cachedEndpoints,
  endpointProblems,
  endpoints,
  metadataFieldProblems,
  type Endpoints,
} from './lib/oidc/index.js'
import { fetchProfile, wantsProfile } from './lib/profile.js'
import { withResource } from './lib/registration/index.js'
import { providerError } from './lib/token-answer.js'
import { isHttpUrl } from './lib/urls.js'

const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code'
/** RFC 8628 §3.2: the interval when the server gives none, and what each `slow_down` adds (§3.5). */
const DEFAULT_INTERVAL = 5
const SLOW_DOWN = 5
/** Bounds on what a server may ask: a flow's lifetime and the pause between polls, in seconds. */
const MAX_LIFETIME = 3600
const MAX_INTERVAL = 300
/** The longest verification URI taken: /start sends the browser there, and a Location of a megabyte reaches nobody. */
const MAX_URI = 2048

/**
 * OAuth 2 device authorization grant (RFC 8628): /store asks the provider for a device and user code;
 * the user enters the code at the provider's verification URI (GET /start sends a browser there) on
 * any device; the app polls POST /result `{hash}` until the tokens come (with the user's profile
 * when the record asks for it).
 */
const plugin: FlowPlugin = {
  description: 'OAuth 2 device authorization grant (RFC 8628): the user signs in on another device',
  required: ['client_id'],

  async validate(record: Readonly<FlowRecord>, io: StoreIo) {
    const problems = {
      ...(await clientAuthProblems(record)),
      ...metadataFieldProblems(record),
      ...dpopProblems(record),
    }
    if (record.callback !== undefined)
      problems.callback = 'is not taken by the device flow: the app collects the result with POST /result {"hash"}'
    if (record.device_authorization_url !== undefined && !isHttpUrl(String(record.device_authorization_url)))
      problems.device_authorization_url = 'must be an absolute http(s) URL'
    if (Object.keys(problems).length) return problems
    if (!record.issuer) {
      for (const field of ['device_authorization_url', 'access_url'])
        if (record[field] === undefined) problems[field] = 'is required (or an issuer to discover it from)'
      if (Object.keys(problems).length) return problems
    }
    const e = record.issuer ? await endpoints(record, io.http) : cachedEndpoints(record)!
    Object.assign(
      problems,
      endpointProblems(record, e, { authorize: false }, io.allowed),
      dpopProblems(record, e.dpopAlgs),
    )
    if (!e.device) problems.device_authorization_url = 'is required (neither in the record nor in the issuer metadata)'
    else if (e.device !== record.device_authorization_url && (!isHttpUrl(e.device) || !io.allowed(e.device)))
      problems.device_authorization_url = `is not an allowed http(s) URL: the issuer metadata gives ${e.device.slice(0, 200)}`
    return problems
  },

  async prepare(record, io) {
    const e = await endpoints(record, io.http)
    const params: Record<string, string> = {}
    if (record.scope) params.scope = String(record.scope)
    if (e.resource) params.resource = e.resource
    const request = await endpointRequest(record, params, { audience: audience(e), supported: e.authMethods })
    const answer = await io.http(e.device!, request)
    const body = parseBody(answer)
    const refused = body && providerError(body, answer.status)
    if (refused)
      throw new FlowError({
        oauthError: refused.oauthError,
        description: `The device authorization was refused: ${refused.description}`,
      })
    const device = body && deviceAnswer(body)
    if (answer.status !== 200 || !device)
      throw new FlowError({
        description: `The device authorization endpoint answered ${answer.status} without a device code, a user code and an http(s) verification_uri of at most ${MAX_URI} characters`,
      })
    // The browser is sent there from /start: the deployment's providers.allow rules it as any record URL.
    for (const field of ['verification_uri', 'verification_uri_complete'] as const) {
      const uri = device[field]
      if (uri !== undefined && !io.allowed(uri))
        throw new FlowError({
          brokerCode: 'PROVIDER_NOT_ALLOWED',
          description: `The device authorization answered a ${field} outside providers.allow (${new URL(uri).origin.slice(0, 200)}): the user is never sent there`,
        })
    }
    // A key the broker makes is made now: every poll's proof is signed with the key the token is bound to.
    const dpop = await flowDpop(record, {}, e.dpopAlgs)
    const { device_code, interval, expires_in, ...shown } = device
    return {
      data: { device_code, interval, ...shown, ...(dpop?.made ? { dpop_jwk: dpop.made } : {}) },
      answer: { ...shown, interval },
      expiresIn: expires_in,
    }
  },

  start(ctx: FlowContext) {
    const to = ctx.data.verification_uri_complete ?? ctx.data.verification_uri
    return { redirect: String(to) }
  },

  async poll(ctx: FlowContext): Promise<PollResult> {
    const r = ctx.record
    const e = await endpoints(r, ctx.http)
    const interval = typeof ctx.data.interval === 'number' ? ctx.data.interval : DEFAULT_INTERVAL
    const dpop = await flowDpop(r, ctx.data, e.dpopAlgs)
    const params: Record<string, string> = { grant_type: DEVICE_GRANT, device_code: String(ctx.data.device_code) }
    if (e.resource) params.resource = e.resource
    let token: Record<string, unknown>
    try {
      token = await requestToken(ctx, params, {
        url: e.token!,
        audience: audience(e),
        authMethods: e.authMethods,
        dpop: dpop?.key,
      })
    } catch (err) {
      if (!(err instanceof FlowError)) throw err
      if (err.oauthError === 'authorization_pending') return { wait: interval }
      if (err.oauthError === 'slow_down') {
        const slower = Math.min(MAX_INTERVAL, interval + SLOW_DOWN)
        return { wait: slower, save: { interval: slower } }
      }
      // The user's refusal and the code's end are the flow's outcome, not a provider failure.
      if (err.oauthError === 'access_denied' || err.oauthError === 'expired_token')
        throw new FlowError({ oauthError: err.oauthError, brokerCode: 'FAILED', description: err.description })
      throw err
    }
    const verified = await checkIdToken(ctx, token, e)
    const profile = wantsProfile(r) ? await fetchProfile(ctx, token, e, dpop?.key) : undefined
    // The resource the app named, as the other flows deliver it.
    const deliver = withResource(deliverable(token, r), r, undefined, profile)
    if (dpop?.made) deliver.dpop_jwk = dpop.made
    return { deliver: verified === undefined ? deliver : { ...deliver, id_token_verified: verified } }
  },
}

const audience = (e: Endpoints): string => e.issuer ?? e.token!

/** RFC 8628 §3.2's answer, checked: the codes, http(s) verification URIs, a bounded lifetime and interval. */
function deviceAnswer(body: Record<string, unknown>):
  | {
      device_code: string
      user_code: string
      verification_uri: string
      verification_uri_complete?: string
      expires_in: number
      interval: number
    }
  | undefined {
  const { device_code, user_code } = body
  // Google says verification_url (its pre-RFC name).
  const uri = body.verification_uri ?? body.verification_url
  const complete = body.verification_uri_complete
  const expires = Number(body.expires_in)
  const interval = body.interval === undefined ? DEFAULT_INTERVAL : Number(body.interval)
  if (typeof device_code !== 'string' || !device_code || typeof user_code !== 'string' || !user_code) return undefined
  if (typeof uri !== 'string' || uri.length > MAX_URI || !isHttpUrl(uri)) return undefined
  if (!Number.isFinite(expires) || expires <= 0 || !Number.isFinite(interval) || interval < 0) return undefined
  return {
    device_code,
    user_code: user_code.slice(0, 64),
    verification_uri: uri,
    ...(typeof complete === 'string' && complete.length <= MAX_URI && isHttpUrl(complete)
      ? { verification_uri_complete: complete }
      : {}),
    expires_in: Math.min(MAX_LIFETIME, Math.ceil(expires)),
    // Not rounded: a test provider polls in fractions of a second.
    interval: Math.min(MAX_INTERVAL, interval),
  }
}

export default plugin
