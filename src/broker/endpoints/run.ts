import { FlowError, type FlowErrorCode, type FlowPlugin, type StepResult } from '../../../flows/contract.js'
import { BrokerError, brokerError, ERRORS } from '../../errors/index.js'
import { bindingCookie as keyedCookie, bindingCookieMatches, cookieKeys } from '../binding-cookie.js'
import { hashOfState, newId, safeEqual } from '../ids.js'
import type { FlowEntry, FlowFailure, FlowFailureCode, Progress } from '../store/flow-store.js'
import type { BrokerDeps } from '../deps.js'
import { flowContext } from './context.js'
import { type Delivery, NO_STORE, REPOSTED, deliverError, postAgain, prepareDelivery } from './deliver.js'
import { heldUntilOutcome, keepForReplay, replayOf } from './hold.js'
import { leaseMs, renewLease } from './lease.js'
import { providerHost } from './record.js'
import { type RetryWindow, finished, keepResult, settle } from './settle.js'
import type { Reply } from './reply.js'
import { redirect } from './reply.js'
import { safeText } from '../../redact.js'

/** What a route hands the runner: the request's parameters (query and body) and cookies. */
export interface FlowRequest {
  params: Record<string, string>
  cookies: Record<string, string | undefined>
  /** A browser's POST from a page of another site (Sec-Fetch-Site: cross-site): it carried no SameSite=Lax cookie. */
  crossSitePost?: boolean
  /** At /callback: the path segment after /callback/, when the provider came back to a per-issuer redirect URI. */
  callbackSegment?: string
  /** Whether the client has gone (closed its connection): a reload aborts the request before it. */
  abandoned?: () => boolean
}

/** The broker's per-flow secrets for a run: its OAuth state (made at /store) and the nonce its binding cookie is keyed on. */
const runData = (entry: FlowEntry) => ({ state: String(entry.data.state), nonce: newId() })

/**
 * At /store, for a plugin whose first step is pure (`startAtStore`): runs it now, so that /start is
 * one atomic store operation. Returns the data and redirect to keep, or undefined to run the step
 * at /start as usual (it threw, or it did not just redirect to await the broker's state).
 */
export async function prepareStart(
  deps: BrokerDeps,
  entry: FlowEntry,
  plugin: FlowPlugin,
): Promise<{ data: Record<string, unknown>; redirect: string } | undefined> {
  const atStore = plugin.startAtStore
  if (!(typeof atStore === 'function' ? atStore(entry.record) : atStore)) return undefined
  // Built once and handed on: every /store of such a flow runs this, so no copies of the entry or data.
  const data: Record<string, unknown> = runData(entry)
  try {
    const started = plugin.start(flowContext(deps, { record: entry.record, data }, {}))
    const step = isThenable(started) ? await started : started
    if (!('redirect' in step) || step.await !== data.state) return undefined
    Object.assign(data, step.save)
    return { data, redirect: step.redirect }
  } catch {
    return undefined
  }
}

const isThenable = <T>(value: T | PromiseLike<T>): value is PromiseLike<T> =>
  typeof (value as PromiseLike<T>)?.then === 'function'

/** GET|POST /start: runs the flow's first step. A start URL works once, unless the flow is reusable. */
export async function startFlow(deps: BrokerDeps, req: FlowRequest): Promise<Reply> {
  const hash = req.params.hash
  if (!hash) throw brokerError('hashRequired')
  // Read and claim in one round trip: a one-shot flow moves on from stored here, once.
  const claimed = await deps.store.claim(hash)
  if (!claimed) throw brokerError('unknownHash')
  const { entry, reusable, redirect: prepared } = claimed
  // A device flow waits for its user from /store on: /start only shows the way to the provider, as often as asked.
  if (entry.progress === 'awaiting_user') return showTheWay(deps, entry, req)
  if (!reusable && entry.progress !== 'stored') {
    // The start URL opened again while the exchange runs (or after its process died): held for the outcome.
    const browser = cookieMatches(deps, entry, req.cookies)
    if (entry.progress === 'exchanging') return heldUntilOutcome(deps, entry, browser)
    const kept = browser && ended(entry) ? await replayOf(deps, entry.hash) : undefined
    if (kept) return kept
    throw finished(entry.progress)
  }
  if (prepared) {
    // The first step ran at /store; the claim moved the flow to awaiting_callback.
    publish(deps, entry, 'started', 'started')
    publish(deps, entry, 'redirected', 'awaiting_callback')
    return redirect(prepared, { cookie: bindingCookie(deps, entry) })
  }
  return runFirstStep(deps, entry, await deps.plugins.get(entry.plugin), req, reusable)
}

/** /start of a device flow: the verification URI, without a cookie or a change of progress (the app polls). */
async function showTheWay(deps: BrokerDeps, entry: FlowEntry, req: FlowRequest): Promise<Reply> {
  const plugin = await deps.plugins.get(entry.plugin)
  const step = await plugin.start(flowContext(deps, entry, req.params))
  if (!('redirect' in step)) throw brokerError('flowStarted')
  return redirect(step.redirect, { headers: { ...NO_STORE } })
}

/**
 * POST /sign: a signing flow's step (oauth_1_1-legged, oauth_echo_1), from one read of the flow.
 * A one-shot flow is refused before anything runs, so its start URL is not spent here.
 */
export async function signWithFlow(deps: BrokerDeps, req: FlowRequest): Promise<Reply> {
  const hash = req.params.hash
  if (!hash) throw brokerError('hashRequired')
  const entry = await deps.store.get(hash)
  if (!entry) throw brokerError('unknownHash')
  const plugin = await deps.plugins.get(entry.plugin)
  if (!plugin.reusable) {
    throw brokerError('notSigningFlow', { plugin: entry.plugin })
  }
  return runFirstStep(deps, entry, plugin, req, true)
}

async function runFirstStep(
  deps: BrokerDeps,
  entry: FlowEntry,
  plugin: FlowPlugin,
  req: FlowRequest,
  reusable: boolean,
): Promise<Reply> {
  const started: FlowEntry = { ...entry, progress: 'started', data: { ...entry.data, ...runData(entry) } }
  publish(deps, started, 'started')
  let step: StepResult
  try {
    step = await plugin.start(flowContext(deps, started, req.params))
  } catch (err) {
    return fail(deps, started, err, reusable)
  }
  return afterStep(deps, started, step, reusable)
}

/** GET|POST /callback: the provider's return, matched to its flow through the store, never a server session. */
export async function callbackFlow(deps: BrokerDeps, req: FlowRequest): Promise<Reply> {
  // postAgain's marker: the answer was posted once more already. It is the broker's, never the provider's news.
  const reposted = req.params[REPOSTED] !== undefined
  if (reposted) delete req.params[REPOSTED]
  const { state, oauth_token: requestToken } = req.params
  // A user who declines at an OAuth 1.0a provider comes back with `denied=<request token>` (Twitter) only.
  const id = state ?? requestToken ?? req.params.denied
  if (!id) throw brokerError('callbackWithoutState')
  // The broker's own state names its flow (the hash is derived from it); an OAuth 1.0a request token was correlated at /start.
  const hash = state !== undefined ? hashOfState(state, deps.config.session.secret) : await deps.store.correlated(id)
  if (state !== undefined && !hash) throw brokerError('stateNotIssued')
  const entry = hash ? await deps.store.get(hash) : undefined
  // A state must be the very one stored with the flow it names: a forged or altered one names no flow that waits.
  if (
    !entry ||
    (state !== undefined && !(typeof entry.data.state === 'string' && safeEqual(state, entry.data.state)))
  ) {
    throw brokerError('noFlowWaits')
  }
  // A flow whose client has a redirect URI of its issuer's own (RFC 9700 §4.4.2) is answered there alone:
  // a code for another server's client, brought back with this flow's state, is never redeemed here.
  const base = `${deps.config.protocol}://${deps.config.host}/callback`
  const at = req.callbackSegment === undefined ? base : `${base}/${req.callbackSegment}`
  if (at !== (typeof entry.data.redirect_uri === 'string' ? entry.data.redirect_uri : base))
    throw brokerError('wrongRedirect')
  if (ended(entry)) {
    // The browser's reload just after the exchange it had dropped ended: the answer its owner kept, once.
    const kept = cookieMatches(deps, entry, req.cookies) ? await replayOf(deps, entry.hash) : undefined
    if (kept) return kept
    throw finished(entry.progress)
  }
  if (!cookieMatches(deps, entry, req.cookies)) {
    // A provider answering with response_mode=form_post comes back by a cross-site POST, which a browser
    // sends without the binding cookie when it is SameSite=Lax (plain http; over https it is None).
    // Posted again from a page of the broker's own, the same answer arrives same-site with the cookie
    // the browser holds for this flow, if any: it is checked then, as always. Nothing is stored meanwhile.
    if (req.crossSitePost && !reposted) return postAgain(at, req.params, entry.record.callback)
    throw brokerError('cookieMismatch')
  }
  // A reload while the exchange runs, or after its process died: held until the outcome (hold.ts).
  if (entry.progress === 'exchanging') return heldUntilOutcome(deps, entry, true)
  const plugin = await deps.plugins.get(entry.plugin)
  // The exchange holds the flow with a lease it renews while it works (lease.ts); its provider requests share provider.timeout.
  const exchanging: FlowEntry = { ...entry, progress: 'exchanging', leaseUntil: Date.now() + leaseMs(deps.config) }
  const moved = await deps.store.advance('awaiting_callback', exchanging)
  if (moved !== 'ok') {
    // Another request of the same browser started the exchange a moment before: this one waits for it.
    const now = moved === 'exchanging' ? await deps.store.get(entry.hash) : undefined
    if (now?.progress === 'exchanging') return heldUntilOutcome(deps, now, true)
    throw moved === 'gone' ? brokerError('unknownHash') : finished(now?.progress ?? moved)
  }
  publish(deps, exchanging, 'callback')
  const stopRenewing = renewLease(deps, exchanging)
  let reply: Reply
  try {
    reply = await exchange(deps, exchanging, plugin, req)
  } finally {
    await stopRenewing()
  }
  // The browser dropped this request (a reload): its next request of this flow takes the answer over.
  if (req.abandoned?.()) await keepForReplay(deps, entry.hash, reply)
  return reply
}

/** The token exchange of a flow now `exchanging`, to its end: the app's delivery or its failure. */
async function exchange(deps: BrokerDeps, exchanging: FlowEntry, plugin: FlowPlugin, req: FlowRequest): Promise<Reply> {
  const deadline = Date.now() + deps.config.provider.timeout
  let step: StepResult
  try {
    if (req.params.error) {
      // The provider's code is the app's `error` alone, whatever it reads like.
      throw new FlowError({
        oauthError: req.params.error,
        description: req.params.error_description ?? `The provider answered ${req.params.error}`,
      })
    }
    if (!plugin.callback)
      throw new FlowError({
        brokerCode: 'FAILED',
        description: `The flow plugin "${exchanging.plugin}" takes no callback`,
      })
    step = await plugin.callback(flowContext(deps, exchanging, req.params, deadline))
  } catch (err) {
    return fail(deps, exchanging, err)
  }
  return afterStep(deps, exchanging, step, false)
}

async function afterStep(deps: BrokerDeps, entry: FlowEntry, step: StepResult, reusable: boolean): Promise<Reply> {
  if ('respond' in step) {
    const { status = 200, headers = {}, body } = step.respond
    return { status, headers: { ...NO_STORE, ...headers }, json: body }
  }
  const data = { ...entry.data, ...step.save }
  if ('redirect' in step) {
    const next: FlowEntry = { ...entry, progress: step.await ? 'awaiting_callback' : entry.progress, data }
    // The broker's own state needs no correlation: the flow's hash is derived from it. Anything else (an OAuth 1.0a
    // request token) does, in the same round trip (pipelined): the browser cannot reach /callback
    // before the 302 is sent.
    const correlate = step.await && step.await !== entry.data.state
    const [bound] = await Promise.all([
      correlate ? deps.store.correlate(step.await!, entry.hash, entry.expiresAt) : undefined,
      reusable ? undefined : advanceOrRefuse(deps, entry.progress, next),
    ])
    // A request token another flow holds already: this flow fails, the other keeps its callback.
    if (bound === false)
      return fail(deps, next, new FlowError({ description: brokerError('requestTokenTaken').message }))
    publish(deps, next, 'redirected')
    const cookie = step.await ? bindingCookie(deps, next) : undefined
    return redirect(step.redirect, { cookie })
  }
  const done: FlowEntry = { ...entry, progress: reusable ? entry.progress : 'completed', data }
  // Made ready before the flow is marked completed: a result that cannot be delivered fails the flow instead.
  let delivery: Delivery
  try {
    delivery = prepareDelivery(deps, done, step.deliver)
  } catch (err) {
    return fail(deps, entry, err, reusable)
  }
  // The writes from here on share one window of retries: the provider has answered.
  const window: RetryWindow = {}
  // The result first: one the store cannot keep fails the flow, and the app is told so rather than sent a dead code.
  if (delivery.keep) {
    const kept = await keepResult(deps, delivery.keep, window)
    if (kept === 'lost') return fail(deps, entry, brokerError('resultNotKept'), reusable, window)
    if (kept === 'unreplicated')
      deps.log.warn(
        { plugin: done.plugin },
        'the result was kept without the replicas store.replicas asks for; delivering its code all the same',
      )
  }
  if (!reusable && (await settle(deps, entry.progress, done, window)) === 'unsettled')
    deps.log.warn({ plugin: done.plugin }, 'the store did not take the completed flow; delivering it all the same')
  publish(deps, done, 'token_exchanged')
  deps.events.publish({
    type: 'delivered',
    hash: done.hash,
    plugin: done.plugin,
    progress: done.progress,
    delivery: delivery.mode,
  })
  return delivery.reply
}

/**
 * Ends a flow with an error: marks it failed and tells the app (callback) or the caller (JSON). A
 * reusable flow (a signing helper) is not marked: it signs again. When another request ended the
 * flow first (an interrupted exchange), this one is refused: the app hears of a flow once.
 */
async function fail(
  deps: BrokerDeps,
  entry: FlowEntry,
  err: unknown,
  reusable = false,
  window: RetryWindow = {},
): Promise<Reply> {
  if (err instanceof BrokerError && err.code === 'STORE_UNAVAILABLE') throw err
  if (!(err instanceof FlowError) && !(err instanceof BrokerError))
    deps.log.error({ err, plugin: entry.plugin }, 'flow step threw')
  const error = flowFailure(err)
  const failed: FlowEntry = { ...entry, progress: 'failed', error }
  if (!reusable && (await settle(deps, entry.progress, failed, window)) === 'unsettled')
    deps.log.warn({ plugin: entry.plugin }, 'the store did not take the failed flow; telling the app all the same')
  deps.events.publish({ type: 'failed', hash: entry.hash, plugin: entry.plugin, progress: 'failed', error: error.code })
  deps.log.info({ plugin: entry.plugin, error: error.code }, 'flow failed')
  return deliverError(failed, error, ERRORS[error.code].status)
}

// The codes a flow plugin may report its failure under (FlowError.brokerCode); the runner's own
// (EXCHANGE_INTERRUPTED, URL_TOO_LONG, RESULT_NOT_KEPT) are never a plugin's to pick.
const PLUGIN_CODES: ReadonlySet<string> = new Set([
  'PROVIDER_ERROR',
  'PROVIDER_TIMEOUT',
  'PROVIDER_NOT_ALLOWED',
  'VALIDATION',
  'FAILED',
] satisfies FlowErrorCode[])
const RUNNER_CODES: ReadonlySet<string> = new Set([
  'URL_TOO_LONG',
  'EXCHANGE_INTERRUPTED',
  'RESULT_NOT_KEPT',
] satisfies FlowFailureCode[])
// RFC 6749 §4.1.2.1: an error code is printable ASCII without " and \.
const OAUTH_CODE = /^[\x20\x21\x23-\x5b\x5d-\x7e]{1,64}$/

/**
 * A flow's failure in both vocabularies, each from its own field, never one read from the other: the
 * broker's registry code (`broker_error`, the HTTP status) and the OAuth `error` the app receives
 * (a provider's own code as it sent it, even one spelled like a broker code).
 */
export function flowFailure(err: unknown): FlowFailure {
  if (err instanceof FlowError) {
    // A plugin in plain JavaScript may hand anything: what is not the broker's own is FAILED, server_error.
    const code = PLUGIN_CODES.has(err.brokerCode) ? err.brokerCode : 'FAILED'
    const oauth =
      typeof err.oauthError === 'string' && OAUTH_CODE.test(err.oauthError) ? err.oauthError : 'server_error'
    // What reaches the app and /hash-check: a provider's words as one short line without secrets.
    return { code, error: oauth, description: safeText(String(err.description)) }
  }
  if (err instanceof BrokerError && RUNNER_CODES.has(err.code))
    return { code: err.code as FlowFailureCode, error: 'server_error', description: err.message }
  const description = err instanceof BrokerError ? err.message : 'The flow plugin failed unexpectedly'
  return { code: 'FAILED', error: 'server_error', description }
}

async function advanceOrRefuse(deps: BrokerDeps, from: Progress, next: FlowEntry): Promise<void> {
  const res = await deps.store.advance(from, next)
  if (res === 'ok') return
  if (res === 'gone') throw brokerError('unknownHash')
  throw finished(res)
}

/**
 * The cookie binding the browser to its flow (binding-cookie.ts): named and valued by HMACs under the
 * cookie key over the flow's hash and its nonce (192 random bits, kept sealed with the flow). Over
 * https its name has the `__Host-` prefix, which a browser accepts only from this very host, Secure,
 * with Path=/ and no Domain: a sibling subdomain cannot plant (toss) a cookie of that name to bind a
 * victim's browser to its own flow.
 */
function bindingCookie(deps: BrokerDeps, entry: FlowEntry): Reply['cookie'] {
  const maxAge = Math.max(1, Math.ceil((entry.expiresAt - Date.now()) / 1000))
  const [key] = cookieKeys(deps.config)
  return { ...keyedCookie(key!, entry.hash, String(entry.data.nonce), secure(deps)), maxAge }
}

const secure = (deps: BrokerDeps) => deps.config.protocol === 'https'

const ended = (entry: FlowEntry) => entry.progress === 'completed' || entry.progress === 'failed'

function cookieMatches(deps: BrokerDeps, entry: FlowEntry, cookies: FlowRequest['cookies']): boolean {
  const nonce = entry.data.nonce
  if (typeof nonce !== 'string') return false
  // A flow started before cookies were keyed: a random name and the bare nonce, both kept with the flow.
  // (Remove once no such flow can wait: store.callbackWait after the release that keyed them.)
  const legacy = entry.data.cookie
  if (typeof legacy === 'string') {
    const got = cookies[secure(deps) ? `__Host-${legacy}` : legacy]
    return !!got && safeEqual(got, nonce)
  }
  return bindingCookieMatches(cookieKeys(deps.config), entry.hash, nonce, secure(deps), cookies)
}

function publish(
  deps: BrokerDeps,
  entry: FlowEntry,
  type: 'started' | 'redirected' | 'callback' | 'token_exchanged',
  progress: Progress = entry.progress,
): void {
  if (deps.events.watched)
    deps.events.publish({
      type,
      hash: entry.hash,
      plugin: entry.plugin,
      progress,
      provider: providerHost(entry.record),
      expiresAt: entry.expiresAt,
    })
}
