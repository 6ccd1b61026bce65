import { FlowError, type FlowPlugin, type StepResult } from '../../../flows/contract.js'
import { brokerError } from '../../errors/index.js'
import type { BrokerDeps } from '../deps.js'
import { flowContext } from './context.js'
import { complete } from './complete.js'
import { NO_STORE } from './deliver.js'
import { type Reply, redirect } from './reply.js'
import { newId } from '../ids.js'
import type { FlowEntry } from '../store/flow-store.js'
import { bindingCookie } from './cookie.js'
import { fail } from './failure.js'
import { finished } from './settle.js'
import { transition } from './transition.js'

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

/**
 * A flow's first step (/start, /sign), from a flow /start's claim moved to `started` (a one-shot one)
 * or one that stays as stored (`reusable`, a signing helper: its run is told, not written).
 */
export async function runFirstStep(
  deps: BrokerDeps,
  entry: FlowEntry,
  plugin: FlowPlugin,
  params: Record<string, string>,
  reusable: boolean,
): Promise<Reply> {
  const data = { ...entry.data, ...runData(entry) }
  const started = reusable
    ? (await transition(deps, entry, 'started', { data }, { told: true })).entry
    : { ...entry, progress: 'started' as const, data }
  let step: StepResult
  try {
    step = await plugin.start(flowContext(deps, started, params))
  } catch (err) {
    return fail(deps, started, err, reusable)
  }
  return afterStep(deps, started, step, reusable)
}

/**
 * What a step's result makes of the flow: an answer of the plugin's own, a redirect (the flow now
 * awaits its callback), or the result delivered to the app and the flow completed.
 */
export async function afterStep(
  deps: BrokerDeps,
  entry: FlowEntry,
  step: StepResult,
  reusable: boolean,
): Promise<Reply> {
  if ('respond' in step) {
    const { status = 200, headers = {}, body } = step.respond
    return { status, headers: { ...NO_STORE, ...headers }, json: body }
  }
  const data = { ...entry.data, ...step.save }
  if ('redirect' in step) return redirected(deps, entry, step, data, reusable)
  return complete(deps, entry, step.deliver, data, reusable)
}

/** A step that sends the browser on: to `awaiting_callback` when it awaits the provider's return. */
async function redirected(
  deps: BrokerDeps,
  entry: FlowEntry,
  step: Extract<StepResult, { redirect: string }>,
  data: Record<string, unknown>,
  reusable: boolean,
): Promise<Reply> {
  const to = step.await ? 'awaiting_callback' : entry.progress
  // The broker's own state needs no correlation: the flow's hash is derived from it. Anything else (an OAuth 1.0a
  // request token) does, in the same round trip (pipelined): the browser cannot reach /callback
  // before the 302 is sent.
  const correlate = step.await && step.await !== entry.data.state
  const [bound, { moved, entry: next }] = await Promise.all([
    correlate ? deps.store.correlate(step.await!, entry.hash, entry.expiresAt) : undefined,
    transition(deps, entry, to, { data }, { told: reusable }),
  ])
  if (moved === 'gone') throw brokerError('unknownHash')
  if (moved !== 'ok') throw finished(moved)
  // A request token another flow holds already: this flow fails, the other keeps its callback.
  if (bound === false) return fail(deps, next, new FlowError({ description: brokerError('requestTokenTaken').message }))
  const cookie = step.await ? bindingCookie(deps, next) : undefined
  return redirect(step.redirect, { cookie })
}
