import { FlowError, type PollResult } from '../../../flows/contract.js'
import { BrokerError, brokerError, ERRORS } from '../../errors/index.js'
import type { FlowEntry, FlowFailure } from '../store/flow-store.js'
import type { BrokerDeps } from '../deps.js'
import { flowContext } from '../flow/context.js'
import { complete } from '../flow/complete.js'
import { NO_STORE, deliverError } from '../flow/deliver.js'
import type { Reply } from '../flow/reply.js'
import { flowFailure } from '../flow/failure.js'
import { transition } from '../flow/transition.js'

/** When another poll is running: the app asks again in a second, and learns the interval then. */
const RUNNING_RETRY_MS = 1000
/** Milliseconds a poll may run beyond the provider timeout before another instance may take over (it died). */
const TAKEOVER_MARGIN_MS = 1000

/**
 * POST /result `{hash}`: one poll of a flow whose user decides on another device (RFC 8628 §3.4).
 * A poll lease in the store, shared by every instance, lets one poll run at a time and none sooner
 * than the provider's interval; the flow moves to `completed` by compare-and-set, so the tokens are
 * delivered once, and the store writes after the provider's answer are retried as /callback's are.
 * Answers 202 `{progress, retry_after}` while the user has not decided.
 */
export async function pollFlow(deps: BrokerDeps, hash: string): Promise<Reply> {
  const entry = await deps.store.get(hash)
  if (!entry) throw brokerError('unknownHash')
  const plugin = await deps.plugins.get(entry.plugin)
  if (!plugin.poll) throw brokerError('notPollingFlow', { plugin: entry.plugin })
  if (entry.progress === 'failed' && entry.error) return failure(entry, entry.error)
  if (entry.progress !== 'awaiting_user') throw brokerError('flowFinished', { progress: 'completed' })
  const lease = await deps.store.takePollLease(hash, deps.config.provider.timeout + TAKEOVER_MARGIN_MS)
  // A poll still running settles within the provider timeout: ask again soon, the interval follows it.
  if (!lease.taken) return waiting(lease.running ? RUNNING_RETRY_MS : lease.leftMs)
  let result: PollResult
  try {
    result = await plugin.poll(flowContext(deps, entry, {}))
  } catch (err) {
    return fail(deps, entry, err)
  }
  if ('wait' in result) {
    const waitMs = result.wait * 1000
    if (result.save) await transition(deps, entry, 'awaiting_user', { data: { ...entry.data, ...result.save } })
    await deps.store.holdPollLease(hash, waitMs)
    return waiting(waitMs)
  }
  // The device code is redeemed: the flow is completed as a /callback's is, its writes retried (complete.ts).
  return complete(deps, entry, result.deliver)
}

/** 202: the user has not decided; the app may poll again in `ms` (Retry-After, whole seconds). */
function waiting(ms: number): Reply {
  const retryAfter = Math.max(1, Math.ceil(ms / 1000))
  return {
    status: 202,
    headers: { ...NO_STORE, 'retry-after': String(retryAfter) },
    json: { progress: 'awaiting_user', retry_after: retryAfter },
  }
}

/** A failed flow's answer: 400 FAILED when the user refused or the code expired, else the failure's own status. */
const failure = (entry: FlowEntry, error: FlowFailure): Reply =>
  deliverError(entry, error, error.code === 'FAILED' ? 400 : ERRORS[error.code].status)

async function fail(deps: BrokerDeps, entry: FlowEntry, err: unknown): Promise<Reply> {
  if (err instanceof BrokerError && err.code === 'STORE_UNAVAILABLE') throw err
  if (!(err instanceof FlowError)) deps.log.error({ err, plugin: entry.plugin }, 'flow poll threw')
  const error = flowFailure(err)
  const { moved, entry: failed } = await transition(deps, entry, 'failed', { error })
  if (moved !== 'ok') throw brokerError('flowFinished', { progress: moved === 'failed' ? 'failed' : 'completed' })
  deps.log.info({ plugin: entry.plugin, error: error.code }, 'flow failed')
  return failure(failed, error)
}
