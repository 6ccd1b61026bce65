import { FlowError, type FlowPlugin, type StepResult } from '../../../flows/contract.js'
import { ProviderError } from '../../../flows/lib/token-answer.js'
import { BrokerError, brokerError, ERRORS } from '../../errors/index.js'
import { hashOfState, legacyCookieName, newCookieName, newId, safeEqual } from '../ids.js'
import type { FlowEntry, FlowFailure, Progress } from '../store/flow-store.js'
import type { BrokerDeps } from '../deps.js'
import { flowContext } from './context.js'
import { NO_STORE, REPOSTED, deliverError, deliverResult, postAgain } from './deliver.js'
import { providerHost } from './record.js'
import type { Reply } from './reply.js'
import { redirect } from './reply.js'
import { safeText } from '../../redact.js'

/** What a route hands the runner: the request's parameters (query and body) and cookies. */
export interface FlowRequest {
  params: Record<string, string>
  cookies: Record<string, string | undefined>
  /** A browser's POST from a page of another site (Sec-Fetch-Site: cross-site): it carried no SameSite=Lax cookie. */
  crossSitePost?: boolean
}

/** The broker's per-flow secrets for a run: its OAuth state (made at /store), the browser cookie's name and nonce. */
const runData = (entry: FlowEntry) => ({ state: String(entry.data.state), nonce: newId(), cookie: newCookieName() })

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
  if (!reusable && entry.progress !== 'stored') throw finished(entry.progress)
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
    return fail(deps, started, err)
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
  if (entry.progress === 'completed' || entry.progress === 'failed') throw finished(entry.progress)
  if (!cookieMatches(deps, entry, req.cookies)) {
    // A provider answering with response_mode=form_post comes back by a cross-site POST, which a browser
    // sends without the binding cookie when it is SameSite=Lax (plain http; over https it is None).
    // Posted again from a page of the broker's own, the same answer arrives same-site with the cookie
    // the browser holds for this flow, if any: it is checked then, as always. Nothing is stored meanwhile.
    if (req.crossSitePost && !reposted)
      return postAgain(`${deps.config.protocol}://${deps.config.host}/callback`, req.params, entry.record.callback)
    throw brokerError('cookieMismatch')
  }
  const plugin = await deps.plugins.get(entry.plugin)
  const exchanging: FlowEntry = { ...entry, progress: 'exchanging' }
  await advanceOrRefuse(deps, 'awaiting_callback', exchanging)
  publish(deps, exchanging, 'callback')
  try {
    if (req.params.error) {
      throw new ProviderError(
        req.params.error,
        req.params.error_description ?? `The provider answered ${req.params.error}`,
      )
    }
    if (!plugin.callback)
      throw new FlowError('server_error', `The flow plugin "${entry.plugin}" takes no callback`, 'FAILED')
    const step = await plugin.callback(flowContext(deps, exchanging, req.params))
    return await afterStep(deps, exchanging, step, false)
  } catch (err) {
    return fail(deps, exchanging, err)
  }
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
      return fail(deps, next, new FlowError('PROVIDER_ERROR', brokerError('requestTokenTaken').message))
    publish(deps, next, 'redirected')
    const cookie = step.await ? bindingCookie(deps, next) : undefined
    return redirect(step.redirect, { cookie })
  }
  const done: FlowEntry = { ...entry, progress: reusable ? entry.progress : 'completed', data }
  if (!reusable) await advanceOrRefuse(deps, entry.progress, done)
  publish(deps, done, 'token_exchanged')
  const { reply, mode } = await deliverResult(deps, done, step.deliver)
  deps.events.publish({
    type: 'delivered',
    hash: done.hash,
    plugin: done.plugin,
    progress: done.progress,
    delivery: mode,
  })
  return reply
}

/** Ends a flow with an error: marks it failed and tells the app (callback) or the caller (JSON). */
async function fail(deps: BrokerDeps, entry: FlowEntry, err: unknown): Promise<Reply> {
  if (err instanceof BrokerError && err.code === 'STORE_UNAVAILABLE') throw err
  const flowErr =
    err instanceof FlowError
      ? err
      : new FlowError(
          'server_error',
          err instanceof BrokerError ? err.message : 'The flow plugin failed unexpectedly',
          'FAILED',
        )
  if (!(err instanceof FlowError) && !(err instanceof BrokerError))
    deps.log.error({ err, plugin: entry.plugin }, 'flow step threw')
  const error = flowFailure(flowErr)
  const failed: FlowEntry = { ...entry, progress: 'failed', error }
  await deps.store.advance(entry.progress, failed)
  deps.events.publish({ type: 'failed', hash: entry.hash, plugin: entry.plugin, progress: 'failed', error: error.code })
  deps.log.info({ plugin: entry.plugin, error: error.code }, 'flow failed')
  return deliverError(failed, error, ERRORS[error.code].status)
}

// The codes an app's callback understands (RFC 6749 §4.1.2.1 and §5.2, OpenID Connect) for failures
// that are the broker's own; anything else the broker did not finish is a server_error.
const OAUTH_ERROR: Partial<Record<FlowError['brokerCode'], string>> = {
  PROVIDER_TIMEOUT: 'temporarily_unavailable',
  VALIDATION: 'invalid_request',
}
const isBrokerCode = (code: string) => /^[A-Z][A-Z_]*$/.test(code)
// RFC 6749 §4.1.2.1: an error code is printable ASCII without " and \.
const OAUTH_CODE = /^[\x20\x21\x23-\x5b\x5d-\x7e]{1,64}$/

/** A flow's failure in both vocabularies: the broker's registry code and the OAuth `error` the app receives. */
export function flowFailure(err: FlowError): FlowFailure {
  // A provider's own code (invalid_grant, access_denied, Square's UNAUTHORIZED …) reaches the app as the provider sent it.
  const ours = isBrokerCode(err.code) && !(err instanceof ProviderError)
  const code = ours && Object.hasOwn(ERRORS, err.code) ? (err.code as FlowError['brokerCode']) : err.brokerCode
  const oauth = ours ? (OAUTH_ERROR[code] ?? 'server_error') : err.code
  // What reaches the app and /hash-check: a provider's words as one short line without secrets, a sane code.
  return { code, error: OAUTH_CODE.test(oauth) ? oauth : 'server_error', description: safeText(err.description) }
}

async function advanceOrRefuse(deps: BrokerDeps, from: Progress, next: FlowEntry): Promise<void> {
  const res = await deps.store.advance(from, next)
  if (res === 'ok') return
  if (res === 'gone') throw brokerError('unknownHash')
  throw finished(res)
}

function finished(progress: string): BrokerError {
  return progress === 'completed' || progress === 'failed'
    ? brokerError('flowFinished', { progress })
    : brokerError('flowStarted')
}

/**
 * The cookie binding the browser to its flow: named at random and carrying the flow's nonce (192
 * random bits), both kept sealed with the flow. It needs no MAC of its own: /callback compares it
 * with the sealed nonce in constant time, so a forged value matches nothing (and the flow is read
 * before the cookie is checked either way).
 */
function bindingCookie(deps: BrokerDeps, entry: FlowEntry): Reply['cookie'] {
  const maxAge = Math.max(1, Math.ceil((entry.expiresAt - Date.now()) / 1000))
  return { name: cookieName(deps, entry), value: String(entry.data.nonce), maxAge }
}

/** The flow's binding cookie name; a flow an earlier version started has none kept and gets the legacy one. */
const cookieName = (deps: BrokerDeps, entry: FlowEntry): string =>
  typeof entry.data.cookie === 'string' ? entry.data.cookie : legacyCookieName(entry.hash, deps.config.cookie.secret)

function cookieMatches(deps: BrokerDeps, entry: FlowEntry, cookies: FlowRequest['cookies']): boolean {
  // Before 0.2 the value was `nonce.mac`: the part before a dot (a nonce has none) keeps such cookies,
  // set by an older broker for a flow still in flight, working through an upgrade.
  const nonce = cookies[cookieName(deps, entry)]?.split('.', 1)[0]
  return !!nonce && typeof entry.data.nonce === 'string' && safeEqual(nonce, entry.data.nonce)
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
