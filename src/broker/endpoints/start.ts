import { BrokerError, brokerError } from '../../errors/index.js'
import type { BrokerDeps } from '../deps.js'
import { bindingCookie, cookieMatches, ended } from '../flow/cookie.js'
import { heldUntilOutcome, replayOf } from '../flow/hold.js'
import { finished } from '../flow/settle.js'
import { runFirstStep } from '../flow/step.js'
import { claimFlow } from '../flow/transition.js'
import { within } from '../../../util/within.js'
import type { FlowEntry } from '../store/flow-store.js'
import { flowContext } from '../flow/context.js'
import { NO_STORE } from '../flow/deliver.js'
import { type Reply, redirect } from '../flow/reply.js'

/** What a route hands an endpoint: the request's parameters (query and body) and cookies. */
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

/** GET|POST /start: runs the flow's first step. A start URL works once, unless the flow is reusable. */
export async function startFlow(deps: BrokerDeps, req: FlowRequest): Promise<Reply> {
  const hash = req.params.hash
  if (!hash) throw brokerError('hashRequired')
  // The reload of a /start this process answered 503 during a failover, come before the undo of that claim
  // reached the new master (it is made again every 100 ms): it waits for the undo, then claims the flow.
  // Asked before the claim is sent: an undo that counts while the claim is under way is no longer told
  // afterwards, and the claim would have found the flow as the undone claim left it (FLOW_STARTED for a
  // flow nobody started). One still under way after store.timeout (its writes wait for a replica the
  // failover left resyncing) answers 503 again, for the browser to reload once more.
  const undoing = deps.store.unclaimingOf(hash)
  if (undoing && (await within(undoing, deps.config.store.timeout, 'pending' as const)) === 'pending')
    throw brokerError('startBeingUndone')
  // Read and claim in one round trip: a one-shot flow moves on from stored here, once.
  const claimed = await claimFlow(deps, hash)
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
  // The first step ran at /store; the claim moved the flow to awaiting_callback.
  if (prepared) return redirect(prepared, { cookie: bindingCookie(deps, entry) })
  const plugin = await deps.plugins.get(entry.plugin)
  if (reusable) return runFirstStep(deps, entry, plugin, req.params, true)
  try {
    return await runFirstStep(deps, entry, plugin, req.params, false)
  } catch (err) {
    // The step's write did not count (a replica short, a failover, no answer), so the browser is not
    // sent on: the flow goes back to stored, or the browser's retry would meet FLOW_STARTED for good.
    if (err instanceof BrokerError && err.code === 'STORE_UNAVAILABLE') await deps.store.unstart(claimed)
    throw err
  }
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
  return runFirstStep(deps, entry, plugin, req.params, true)
}
