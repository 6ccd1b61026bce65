import { FlowError, type FlowPlugin, type StepResult } from '../../../flows/contract.js'
import { brokerError } from '../../errors/index.js'
import type { BrokerDeps } from '../deps.js'
import { cookieMatches, ended } from '../flow/cookie.js'
import { beginExchange } from '../flow/exchange.js'
import { fail } from '../flow/failure.js'
import { heldUntilOutcome, keepForReplay, replayOf } from '../flow/hold.js'
import { finished } from '../flow/settle.js'
import { afterStep } from '../flow/step.js'
import { hashOfState, safeEqual } from '../ids.js'
import type { FlowEntry } from '../store/flow-store.js'
import { flowContext } from '../flow/context.js'
import { REPOSTED, postAgain } from '../flow/deliver.js'
import type { Reply } from '../flow/reply.js'
import type { FlowRequest } from './start.js'

/**
 * GET|POST /callback: the provider's return, matched to its flow through the store, never a server
 * session. Locate the flow, guard it (its redirect URI, its end, the browser's cookie), move it to
 * `exchanging`, run the plugin's step (the token exchange), deliver its result, complete the flow.
 */
export async function callbackFlow(deps: BrokerDeps, req: FlowRequest, retried = false): Promise<Reply> {
  // postAgain's marker: the answer was posted once more already. It is the broker's, never the provider's news.
  const reposted = req.params[REPOSTED] !== undefined
  if (reposted) delete req.params[REPOSTED]
  // Held for an exchange that was undone before it began: this request runs the callback itself, once.
  const again = retried ? undefined : () => callbackFlow(deps, req, true)
  const entry = await locate(deps, req)
  const refused = await guard(deps, entry, req, reposted, again)
  if (refused) return refused
  const plugin = await deps.plugins.get(entry.plugin)
  // The exchange holds the flow with a lease it renews while it works; its provider requests share provider.timeout.
  const begun = await beginExchange(deps, entry, again)
  if ('held' in begun) return begun.held
  const { exchanging, stopRenewing } = begun
  let reply: Reply
  try {
    const step = await callbackStep(deps, exchanging, plugin, req)
    reply =
      'failure' in step ? await fail(deps, exchanging, step.failure) : await afterStep(deps, exchanging, step, false)
  } finally {
    await stopRenewing()
  }
  // The browser dropped this request (a reload): its next request of this flow takes the answer over.
  if (req.abandoned?.()) await keepForReplay(deps, entry.hash, reply)
  return reply
}

/** The flow a callback names: by the broker's own state (the hash derives from it), or an OAuth 1.0a request token. */
async function locate(deps: BrokerDeps, req: FlowRequest): Promise<FlowEntry> {
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
  if (callbackAt(deps, req) !== (typeof entry.data.redirect_uri === 'string' ? entry.data.redirect_uri : baseOf(deps)))
    throw brokerError('wrongRedirect')
  return entry
}

const baseOf = (deps: BrokerDeps) => `${deps.config.protocol}://${deps.config.host}/callback`
const callbackAt = (deps: BrokerDeps, req: FlowRequest) =>
  req.callbackSegment === undefined ? baseOf(deps) : `${baseOf(deps)}/${req.callbackSegment}`

/**
 * What answers a callback before any exchange, if anything: a flow at its end (the kept answer of a
 * dropped exchange, once, else FLOW_FINISHED), a request without the browser's binding cookie (a
 * cross-site form_post posted again same-site, else refused), a reload during the exchange (held).
 */
async function guard(
  deps: BrokerDeps,
  entry: FlowEntry,
  req: FlowRequest,
  reposted: boolean,
  again: (() => Promise<Reply>) | undefined,
): Promise<Reply | undefined> {
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
    if (req.crossSitePost && !reposted) return postAgain(callbackAt(deps, req), req.params, entry.record.callback)
    throw brokerError('cookieMismatch')
  }
  // A reload while the exchange runs, or after its process died: held until the outcome (hold.ts).
  if (entry.progress === 'exchanging') return heldUntilOutcome(deps, entry, true, again)
  return undefined
}

/** The plugin's step for a flow now `exchanging` (the token exchange): its result, or why it failed. */
async function callbackStep(
  deps: BrokerDeps,
  exchanging: FlowEntry,
  plugin: FlowPlugin,
  req: FlowRequest,
): Promise<StepResult | { failure: unknown }> {
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
    return await plugin.callback(flowContext(deps, exchanging, req.params, Date.now() + deps.config.provider.timeout))
  } catch (err) {
    return { failure: err }
  }
}
