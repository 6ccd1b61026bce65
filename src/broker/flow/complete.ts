import { brokerError } from '../../errors/index.js'
import type { BrokerDeps } from '../deps.js'
import { type Delivery, prepareDelivery } from './deliver.js'
import { fail } from './failure.js'
import type { Reply } from './reply.js'
import type { RetryWindow } from './settle.js'
import type { FlowEntry } from '../store/flow-store.js'
import { transition } from './transition.js'

/**
 * The one way a flow is completed with a result, whichever step made it (a /start, a /callback's
 * token exchange, a device flow's poll): the result made ready for the app, then the move to
 * `completed` with, for delivery `code`, the result kept in the same round trip. The provider has
 * answered by then, so the writes are retried within store.timeout (settle.ts); a result the store
 * never keeps fails the flow (RESULT_NOT_KEPT, told to the app once) instead of sending a dead code.
 * `data`: the flow's data as the step leaves it; `reusable`: a signing helper's run, told, not written.
 */
export async function complete(
  deps: BrokerDeps,
  entry: FlowEntry,
  result: Record<string, unknown>,
  data: Record<string, unknown> = entry.data,
  reusable = false,
): Promise<Reply> {
  // Made ready before the flow is marked completed: a result that cannot be delivered fails the flow instead.
  let delivery: Delivery
  try {
    delivery = prepareDelivery(deps, { ...entry, data }, result)
  } catch (err) {
    return fail(deps, entry, err, reusable)
  }
  // The writes from here on share one window of retries: the provider has answered.
  const window: RetryWindow = {}
  // A reusable flow's run completes too, though its stored flow signs again: told, not written.
  const {
    moved,
    entry: done,
    kept,
  } = await transition(
    deps,
    entry,
    'completed',
    { data },
    { window, told: reusable, keep: delivery.keep, delivery: delivery.mode },
  )
  if (kept === 'lost') return fail(deps, moved === 'ok' ? done : entry, brokerError('resultNotKept'), reusable, window)
  if (kept === 'unreplicated')
    deps.log.warn(
      { plugin: entry.plugin },
      'the result was kept without the replicas store.replicas asks for; delivering its code all the same',
    )
  if (moved === 'unsettled')
    deps.log.warn({ plugin: done.plugin }, 'the store did not take the completed flow; delivering it all the same')
  return delivery.reply
}
