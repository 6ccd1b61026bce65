import { FlowError, type FlowContext, type HttpAnswer, type HttpRequest } from '../../../flows/contract.js'
import type { FlowEntry } from '../store/flow-store.js'
import type { BrokerDeps } from '../deps.js'
import { brokerError } from '../../errors/index.js'
import { providerPolicy } from '../outbound/policy.js'
import { destinationRefused } from '../outbound/record-check.js'
import { MAX_ANSWER, OutboundError, outboundRequest } from '../outbound/request.js'

/** Whether a provider URL met after /store may be used: the same rules as the record's own URLs at /store. */
export const allowedDestination = (url: string): boolean => !destinationRefused(url)

/**
 * The context a flow step gets, for one request. With a `deadline` (ms since the epoch: the token
 * exchange at /callback), every provider request of the step shares it, so the step ends within
 * provider.timeout and its flow's lease (lease.ts) outlives a step that is still running.
 */
export function flowContext(
  deps: BrokerDeps,
  entry: Pick<FlowEntry, 'record' | 'data'>,
  params: Record<string, string>,
  deadline?: number,
): FlowContext {
  const { config } = deps
  const timeout = config.provider.timeout
  return {
    record: entry.record,
    data: entry.data,
    callbackUrl: `${config.protocol}://${config.host}/callback`,
    state: String(entry.data.state ?? ''),
    params,
    http: (url, request) =>
      providerFetch(url, request, deadline === undefined ? timeout : Math.min(timeout, deadline - Date.now()), timeout),
    allowed: allowedDestination,
    // A plain value, not a getter made per call: an object literal with an accessor is built by the
    // runtime (4.3k instructions of each /store that runs its first step there, bench/instructions.ts).
    // The store hands out one kept instance.
    registrations: deps.store.registrations(config.registration),
  }
}

/**
 * HTTP to a provider with a timeout, under the process's provider policy (providers.allow, and the
 * address guard at connect time); every failure becomes a FlowError the app can be told about. Its
 * text names the origin the record gave and what kind of failure it was, never an address the
 * guard refused or the socket's own error (a port scanner's answer).
 */
export async function providerFetch(
  url: string,
  request: HttpRequest = {},
  timeoutMs: number,
  /** The limit the error text names, when `timeoutMs` is what is left of it. */
  limitMs = timeoutMs,
): Promise<HttpAnswer> {
  let target: URL
  try {
    target = new URL(url)
  } catch {
    throw new FlowError({ description: brokerError('providerUrlInvalid').message })
  }
  if (timeoutMs < 1) throw fetchError(new OutboundError('timeout', 'no time left'), target.origin, limitMs)
  try {
    return await outboundRequest(providerPolicy(), target, request, timeoutMs)
  } catch (err) {
    throw fetchError(err, target.origin, limitMs)
  }
}

const REASONS: Record<OutboundError['kind'], string> = {
  refused: '',
  timeout: '',
  'too-large': `answer larger than ${MAX_ANSWER} bytes`,
  unresolved: 'its host name does not resolve',
  tls: 'its TLS certificate was not accepted',
  connection: 'the connection failed',
}

function fetchError(thrown: unknown, origin: string, timeoutMs: number): FlowError {
  // http.request throws on a header it cannot send; /store refuses such fields, a plugin may still build one.
  const err = thrown instanceof OutboundError ? thrown : new OutboundError('connection', String(thrown))
  if (err.kind === 'timeout') {
    return new FlowError({
      brokerCode: 'PROVIDER_TIMEOUT',
      description: `${origin} did not answer within ${timeoutMs} ms`,
    })
  }
  if (err.kind === 'refused') {
    return new FlowError({
      brokerCode: 'PROVIDER_NOT_ALLOWED',
      description: brokerError('providerRefused', { origin }).message,
    })
  }
  return new FlowError({ description: `Could not reach ${origin}: ${REASONS[err.kind] || 'the request failed'}` })
}
