import { FlowError, type FlowContext, type HttpAnswer, type HttpRequest } from '../../../flows/contract.js'
import type { FlowEntry } from '../redis/flow-store.js'
import type { BrokerDeps } from '../deps.js'

const MAX_ANSWER = 1_048_576

/** The context a flow step gets, for one request. */
export function flowContext(deps: BrokerDeps, entry: Pick<FlowEntry, 'record' | 'data'>, params: Record<string, string>): FlowContext {
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

/** HTTP to a provider with a timeout; every failure becomes a FlowError the app can be told about. */
export async function providerFetch(url: string, request: HttpRequest = {}, timeoutMs: number): Promise<HttpAnswer> {
  const origin = safeOrigin(url)
  let res: Response
  try {
    res = await fetch(url, {
      method: request.method ?? 'GET',
      headers: { 'user-agent': 'broker (+oauth flow broker)', ...request.headers },
      body: request.body,
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
    })
  } catch (err) {
    throw fetchError(err, origin, timeoutMs)
  }
  let body: string
  try {
    body = await readCapped(res)
  } catch (err) {
    throw fetchError(err, origin, timeoutMs)
  }
  const headers: Record<string, string> = {}
  res.headers.forEach((v, k) => (headers[k] = v))
  return { status: res.status, headers, body }
}

async function readCapped(res: Response): Promise<string> {
  const buf = Buffer.from(await res.arrayBuffer())
  if (buf.length > MAX_ANSWER) throw new Error(`answer larger than ${MAX_ANSWER} bytes`)
  return buf.toString('utf8')
}

function fetchError(err: unknown, origin: string, timeoutMs: number): FlowError {
  const e = err as Error & { cause?: { code?: string; message?: string } }
  if (e.name === 'TimeoutError' || e.name === 'AbortError') {
    return new FlowError('PROVIDER_TIMEOUT', `${origin} did not answer within ${timeoutMs} ms`, 'PROVIDER_TIMEOUT')
  }
  const cause = e.cause?.code ?? e.cause?.message ?? e.message
  return new FlowError('PROVIDER_ERROR', `Could not reach ${origin}: ${cause}`)
}

function safeOrigin(url: string): string {
  try {
    return new URL(url).origin
  } catch {
    return 'the provider'
  }
}
