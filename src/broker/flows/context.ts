import { FlowError, type FlowContext, type HttpAnswer, type HttpRequest } from '../../../flows/contract.js'
import type { FlowEntry } from '../redis/flow-store.js'
import type { BrokerDeps } from '../deps.js'

const MAX_ANSWER = 1_048_576

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

/** Reads the body as it arrives and cancels it once past MAX_ANSWER, so an endless answer never sits in memory. */
async function readCapped(res: Response): Promise<string> {
  if (!res.body) return ''
  const reader = res.body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > MAX_ANSWER) {
      // Cancelling closes the connection: the provider stops sending and what arrived is dropped.
      void reader.cancel().catch(() => undefined)
      throw new Error(`answer larger than ${MAX_ANSWER} bytes`)
    }
    chunks.push(value)
  }
  // Decoded once, whole: a character split across chunks comes out right.
  return Buffer.concat(chunks, size).toString('utf8')
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
