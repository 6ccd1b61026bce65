import { Agent as HttpAgent, type IncomingMessage, request as httpRequest } from 'node:http'
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https'
import type { LookupAddress, LookupAllOptions, LookupOneOptions } from 'node:dns'
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib'
import type { Readable } from 'node:stream'
import type { HttpAnswer, HttpRequest } from '../../../flows/contract.js'
import { isIpLiteral } from '../../config/addresses.js'
import type { ProviderPolicy } from './policy.js'

/** Why a provider request did not get an answer; `kind` is all an error text may say. */
export class OutboundError extends Error {
  constructor(
    readonly kind: 'refused' | 'timeout' | 'too-large' | 'unresolved' | 'tls' | 'connection',
    /** The low-level reason, for the log only: it may name internal addresses. */
    readonly detail: string,
  ) {
    super(kind)
    this.name = 'OutboundError'
  }
}

export const MAX_ANSWER = 1_048_576

/**
 * How long a kept-alive connection to a provider may sit unused before the broker closes it (less when
 * the provider's `Keep-Alive: timeout=N` says it closes sooner: Node then closes at N-1 s). Without it a
 * connection stayed open until the provider closed it, and one that never does held a socket forever.
 */
export const IDLE_CONNECTION_MS = 30_000

// Kept-alive connections per origin: a provider's token endpoint is called again and again.
const agentOptions = { keepAlive: true, timeout: IDLE_CONNECTION_MS }
const agents = { http: new HttpAgent(agentOptions), https: new HttpsAgent(agentOptions) }

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void

/**
 * A `lookup` for net.connect that resolves through the policy's resolver and keeps only the
 * addresses the policy permits for `hostname`: the check is on what the socket connects to, at
 * connect time, so neither DNS rebinding nor a second record dodges it.
 */
function guardedLookup(policy: ProviderPolicy) {
  return (hostname: string, options: LookupOneOptions | LookupAllOptions, callback: LookupCallback): void => {
    policy.resolve(hostname).then(
      (all) => {
        const family = typeof options.family === 'number' ? options.family : 0
        const ok = all.filter((a) => (!family || a.family === family) && policy.permits(hostname, a.address))
        if (!ok.length) {
          const err: NodeJS.ErrnoException = new OutboundError(
            'refused',
            `${hostname} resolves to no permitted address`,
          )
          err.code = 'EPROVIDERNOTALLOWED'
          return callback(err, '')
        }
        if (options.all) callback(null, ok)
        else callback(null, ok[0]!.address, ok[0]!.family)
      },
      (err: NodeJS.ErrnoException) => callback(err, ''),
    )
  }
}

/**
 * One HTTP request to a provider under `policy`, with a timeout over the whole exchange and the
 * answer capped at MAX_ANSWER decoded bytes. No redirect is followed. Fails with an OutboundError.
 */
export function outboundRequest(
  policy: ProviderPolicy,
  url: URL,
  req: HttpRequest,
  timeoutMs: number,
): Promise<HttpAnswer> {
  if (!policy.allows(url.href)) return Promise.reject(new OutboundError('refused', `${url.origin} is not listed`))
  // An IP literal is not looked up: net.connect takes it as it is, so it is judged here.
  if (isIpLiteral(url.hostname) && !policy.permits(url.hostname, url.hostname)) {
    return Promise.reject(new OutboundError('refused', `${url.hostname} is not a permitted address`))
  }
  const https = url.protocol === 'https:'
  return new Promise<HttpAnswer>((resolve, reject) => {
    let settled = false
    const finish = (err: OutboundError | undefined, answer?: HttpAnswer) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      if (err) {
        request.destroy()
        reject(err)
      } else resolve(answer!)
    }
    const request = (https ? httpsRequest : httpRequest)(url, {
      method: req.method ?? 'GET',
      headers: { 'user-agent': 'broker (+oauth flow broker)', ...req.headers },
      agent: https ? agents.https : agents.http,
      lookup: guardedLookup(policy) as never,
    })
    const timer = setTimeout(() => finish(new OutboundError('timeout', `no answer in ${timeoutMs} ms`)), timeoutMs)
    request.on('error', (err) => finish(fromSocketError(err)))
    request.on('response', (res) => {
      readCapped(res).then(
        (body) => finish(undefined, { status: res.statusCode ?? 0, headers: flatHeaders(res), body }),
        (err: unknown) => finish(err instanceof OutboundError ? err : fromSocketError(err as Error)),
      )
    })
    request.end(req.body)
  })
}

function flatHeaders(res: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {}
  const headers = res.headers
  for (const k in headers) {
    const v = headers[k]
    if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : v
  }
  return out
}

/**
 * The body decoded (gzip, deflate, br, as a provider may send unasked), refused once past MAX_ANSWER.
 * Read with the stream's own events: an async iterator costs a promise per chunk and was a visible share
 * of a whole flow's allocations (`npm run bench`, docs/decisions/0006).
 */
function readCapped(res: IncomingMessage): Promise<string> {
  const encoding = String(res.headers['content-encoding'] ?? '').toLowerCase()
  const decoder =
    encoding === 'gzip' || encoding === 'x-gzip'
      ? createGunzip()
      : encoding === 'deflate'
        ? createInflate()
        : encoding === 'br'
          ? createBrotliDecompress()
          : undefined
  const stream: Readable = decoder ? res.pipe(decoder) : res
  if (decoder) res.once('error', (err) => decoder.destroy(err))
  return new Promise<string>((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    // An early end (too large, a failure) closes the connection: the provider stops sending.
    const fail = (err: unknown) => {
      stream.off('data', onData)
      res.destroy()
      decoder?.destroy()
      reject(err)
    }
    const onData = (chunk: Buffer) => {
      size += chunk.length
      if (size > MAX_ANSWER) fail(new OutboundError('too-large', `answer larger than ${MAX_ANSWER} bytes`))
      else chunks.push(chunk)
    }
    stream.on('data', onData)
    // A connection cut mid-answer is an error here ('aborted'), as is a decoder's bad input.
    stream.on('error', fail)
    stream.once('end', () => {
      if (size > MAX_ANSWER) return
      if (!res.complete) res.destroy()
      // Decoded once, whole: a character split across chunks comes out right.
      resolve(Buffer.concat(chunks, size).toString('utf8'))
    })
  })
}

function fromSocketError(err: Error): OutboundError {
  if (err instanceof OutboundError) return err
  const code = (err as NodeJS.ErrnoException).code ?? ''
  if (code === 'EPROVIDERNOTALLOWED') return new OutboundError('refused', err.message)
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'ENODATA') return new OutboundError('unresolved', code)
  if (/CERT|SSL|TLS|SELF_SIGNED|UNABLE_TO/.test(code)) return new OutboundError('tls', code)
  return new OutboundError('connection', code || err.message)
}
