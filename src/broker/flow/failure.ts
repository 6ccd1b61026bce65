import { FlowError, type FlowErrorCode } from '../../../flows/contract.js'
import { BrokerError, ERRORS } from '../../errors/index.js'
import { safeText } from '../../redact.js'
import type { BrokerDeps } from '../deps.js'
import { deliverError } from './deliver.js'
import type { Reply } from './reply.js'
import type { FlowEntry, FlowFailure, FlowFailureCode } from '../store/flow-store.js'
import type { RetryWindow } from './settle.js'
import { transition } from './transition.js'

/**
 * Ends a flow with an error: marks it failed and tells the app (callback) or the caller (JSON). A
 * reusable flow (a signing helper) is not marked: it signs again. When another request ended the
 * flow first (an interrupted exchange), this one is refused: the app hears of a flow once.
 */
export async function fail(
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
  const { moved, entry: failed } = await transition(deps, entry, 'failed', { error }, { window, told: reusable })
  if (moved === 'unsettled')
    deps.log.warn({ plugin: entry.plugin }, 'the store did not take the failed flow; telling the app all the same')
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
