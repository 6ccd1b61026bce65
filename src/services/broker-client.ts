import { BrokerError, brokerError, type ErrorCode, ERRORS, fromBrokerAnswer } from '../errors/index.js'
import type { HashCheck } from '../broker/endpoints/hash-check.js'
import type { StoredFlow } from '../broker/endpoints/store.js'

export type { HashCheck, StoredFlow }

/** Where commands look for a broker when neither --broker nor BROKER_URL says. */
export const DEFAULT_BROKER_URL = 'http://localhost:3000'

/** A small client of the broker's HTTP API for the CLI: JSON errors become registry errors. */
export class BrokerClient {
  readonly url: string
  private readonly apiKey?: string

  /** `apiKey`: one of the broker's api.keys, sent as a Bearer token (POST /store and /result need it then). */
  constructor(url: string = DEFAULT_BROKER_URL, opts: { apiKey?: string } = {}) {
    this.url = normalizeBrokerUrl(url)
    this.apiKey = opts.apiKey || undefined
  }

  /** GET /ping: BROKER_UNREACHABLE when nothing answers, FAILED when what answers is no broker. */
  async ping(): Promise<void> {
    await this.call('/ping')
  }

  /** POST /store with a JSON record: its hash, start URL, flow plugin and seconds to live. */
  async store(record: Record<string, unknown>): Promise<StoredFlow> {
    const stored = await this.call<Partial<StoredFlow>>('/store', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(record),
    })
    const { hash, url, plugin, expires_in } = stored
    if (
      typeof hash !== 'string' ||
      typeof url !== 'string' ||
      typeof plugin !== 'string' ||
      typeof expires_in !== 'number'
    )
      throw brokerError('storeAnswerUnexpected', { url: this.url })
    // The rest as the broker gave it: a device flow's user_code, verification_uri(_complete) and interval.
    return { ...stored, hash, url, plugin, expires_in }
  }

  /** GET /hash-check?hash= */
  hashCheck(hash: string): Promise<HashCheck> {
    return this.call<HashCheck>(`/hash-check?hash=${encodeURIComponent(hash)}`)
  }

  /** POST /result: redeems a one-time result code (delivery `code`). */
  redeem(code: string): Promise<Record<string, unknown>> {
    return this.call('/result', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ result: code }),
    })
  }

  /** POST /result {hash}: one poll of a device flow; the seconds to wait (202), or the delivered result. */
  async poll(hash: string): Promise<{ retryAfter: number } | { result: Record<string, unknown> }> {
    let status = 0
    const body = await this.call<Record<string, unknown>>(
      '/result',
      { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ hash }) },
      (s) => (status = s),
    )
    if (status !== 202) return { result: body }
    const seconds = Number(body.retry_after)
    return { retryAfter: Number.isFinite(seconds) && seconds > 0 ? Math.min(seconds, 300) : 5 }
  }

  private async call<T>(path: string, init: RequestInit = {}, onStatus?: (status: number) => void): Promise<T> {
    let res: Response
    try {
      const headers = {
        ...(init.headers as Record<string, string> | undefined),
        ...(this.apiKey ? { authorization: `Bearer ${this.apiKey}` } : {}),
      }
      res = await fetch(this.url + path, { ...init, headers, signal: AbortSignal.timeout(15_000) })
    } catch (err) {
      throw unreachable(this.url, err)
    }
    onStatus?.(res.status)
    const text = await res.text()
    let body: unknown
    try {
      body = text ? JSON.parse(text) : {}
    } catch {
      throw brokerError('notABroker', { url: this.url, status: res.status })
    }
    if (!res.ok) throw fromAnswer(res.status, body)
    return body as T
  }
}

/** The broker's base URL without a trailing slash; a bad URL is a usage error naming it. */
export function normalizeBrokerUrl(url: string): string {
  const parsed = URL.canParse(url) ? new URL(url) : undefined
  if (parsed?.protocol !== 'http:' && parsed?.protocol !== 'https:')
    throw brokerError('brokerUrlInvalid', { url, example: DEFAULT_BROKER_URL })
  return parsed.toString().replace(/\/+$/, '')
}

function unreachable(url: string, err: unknown): BrokerError {
  const e = err as Error & { cause?: { code?: string; message?: string } }
  // fetch says only "fetch failed": the reason (ECONNREFUSED, ENOTFOUND, "bad port") is in its cause.
  const cause = e.name === 'TimeoutError' ? 'no answer in 15 s' : (e.cause?.code ?? e.cause?.message ?? e.name)
  return brokerError('brokerUnreachable', { url, cause })
}

/** A broker's JSON error `{code, message, …}` as the same registry error here. */
function fromAnswer(status: number, body: unknown): BrokerError {
  const { code, message, ...rest } = (body && typeof body === 'object' ? body : {}) as {
    code?: string
    message?: string
  } & Record<string, unknown>
  // Every broker error carries a message; an answer without one is not a broker's.
  if (typeof message !== 'string') return brokerError('brokerAnswered', { status })
  const known = code && Object.hasOwn(ERRORS, code) ? (code as ErrorCode) : 'FAILED'
  // The broker's words name the header; a CLI user sets it with a flag.
  if (known === 'UNAUTHORIZED') return brokerError('apiKeyRefusedByBroker', { message })
  return fromBrokerAnswer(known, message, rest)
}
