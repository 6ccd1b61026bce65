import { FlowError, type FlowContext, type HttpAnswer, type HttpRequest } from '../../../flows/contract.js'
import type { FlowEntry } from '../store/flow-store.js'
import type { BrokerDeps } from '../deps.js'
import { brokerError } from '../../errors/index.js'
import { providerPolicy } from '../outbound/policy.js'
import { MAX_ANSWER, OutboundError, outboundRequest } from '../outbound/request.js'

/** The context a flow step gets, for one request. */
export function flowContext(
  deps: BrokerDeps,
  entry: Pick<FlowEntry, 'record' | 'data'>,
  params: Record<string, string>,
): FlowContext {
  const { config } = deps
  return {
    record: entry.record,
    data: entry.data,
    callbackUrl: `${config.protocol}://${config.host}/callback`,
    state: String(entry.data.state ?? ''),
    params,
    http: (url, request) => providerFetch(url, request, config.provider.timeout),
  }
}

/**
 * HTTP to a provider with a timeout, under the process's provider policy (providers.allow, and the
 * address guard at connect time); every failure becomes a FlowError the app can be told about. Its
 * text names the origin the record gave and what kind of failure it was, never an address the
 * guard refused or the socket's own error (a port scanner's answer).
 */
export async function providerFetch(url: string, request: HttpRequest = {}, timeoutMs: number): Promise<HttpAnswer> {
  let target: URL
  try {
    target = new URL(url)
  } catch {
    throw new FlowError('PROVIDER_ERROR', brokerError('providerUrlInvalid').message)
  }
  try {
    return await outboundRequest(providerPolicy(), target, request, timeoutMs)
  } catch (err) {
    throw fetchError(err, target.origin, timeoutMs)
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
    return new FlowError('PROVIDER_TIMEOUT', `${origin} did not answer within ${timeoutMs} ms`, 'PROVIDER_TIMEOUT')
  }
  if (err.kind === 'refused') {
    return new FlowError('PROVIDER_NOT_ALLOWED', brokerError('providerRefused', { origin }).message)
  }
  return new FlowError('PROVIDER_ERROR', `Could not reach ${origin}: ${REASONS[err.kind] || 'the request failed'}`)
}
