import { randomBytes, timingSafeEqual } from 'node:crypto'
import { createServer, type IncomingMessage, type Server } from 'node:http'
import { brokerError } from '../../errors/index.js'
import { within } from '../../../util/within.js'
import type { BrokerClient } from '../broker-client.js'

/** What reached the one-shot callback: the flow's result, and how the broker delivered it. */
export interface Captured {
  /** `poll`: a device flow's result, collected with POST /result {hash}. */
  delivery: 'query' | 'form_post' | 'code' | 'poll'
  result: Record<string, unknown>
}

export interface CaptureListener {
  /** The callback URL to store: http://127.0.0.1:<free port>/callback/<random path>; no other path is answered. */
  callback: string
  /** The state to store with the flow: the broker hands it back with every delivery, and nothing else is taken. */
  state: string
  /** The port it listens on. */
  port: number
  /** Resolves with the first result delivered, or undefined when `ms` pass first; rejects with FAILED for a delivered error. */
  delivered(ms: number): Promise<Captured | undefined>
  close(): Promise<void>
}

const PAGE = (title: string, text: string) =>
  `<!doctype html><html><head><meta charset="utf-8"><meta name="referrer" content="no-referrer"><title>${title}</title></head><body><h1>${title}</h1><p>${text}</p></body></html>`

const sameText = (a: string | undefined, b: string) =>
  a !== undefined && a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b))

/**
 * Listens once on 127.0.0.1 (a free port) for the broker's delivery: query, form_post, or a
 * one-time `result` code that it redeems at the broker at once. Any local process can reach a
 * loopback port: only a request to the random path that carries the flow's `state` (the record's
 * own, else a random one) is taken; anything else gets a 404 and the listener keeps waiting.
 */
export async function listenOnce(client: BrokerClient, opts: { state?: string } = {}): Promise<CaptureListener> {
  const path = `/callback/${randomBytes(16).toString('base64url')}`
  const state = opts.state ?? randomBytes(16).toString('base64url')
  let settle!: { resolve: (c: Captured) => void; reject: (e: Error) => void }
  const outcome = new Promise<Captured>((resolve, reject) => (settle = { resolve, reject }))
  outcome.catch(() => undefined)
  let done = false

  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1')
    const notHere = () => void res.writeHead(404, { 'content-type': 'text/plain' }).end('Not here.')
    if (!sameText(url.pathname, path) || done) return notHere()
    deliveredResult(req, client, (params) => {
      // Claimed only now: a request without the flow's state must not use up the one delivery.
      if (done || !sameText(params.state, state)) return false
      return (done = true)
    }).then(
      (captured) => {
        res
          .writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' })
          .end(PAGE('Done', 'The result is in your terminal; you can close this tab.'))
        settle.resolve(captured)
      },
      (err: Error) => {
        if (err === NOT_OURS) return notHere()
        res
          .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
          .end(PAGE('The flow failed', 'See your terminal.'))
        settle.reject(err)
      },
    )
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  const port = typeof address === 'object' && address ? address.port : 0
  const close = () => new Promise<void>((resolve) => server.close(() => resolve()).closeAllConnections())

  return {
    callback: `http://127.0.0.1:${port}${path}`,
    state,
    close,
    port,
    delivered: (ms) => within(outcome, ms, undefined),
  }
}

// What deliveredResult rejects with when `accept` turned the request down.
const NOT_OURS = new Error('not this flow')

/**
 * The result a request to a callback carries; FAILED when the broker delivered an error instead.
 * `accept` sees the parameters first: when it says no, nothing is redeemed and NOT_OURS is thrown.
 */
export async function deliveredResult(
  req: IncomingMessage,
  client: BrokerClient,
  accept: (params: Record<string, string>) => boolean = () => true,
): Promise<Captured> {
  const { params, posted } = await readParams(req, new URL(req.url ?? '/', 'http://127.0.0.1'))
  if (!accept(params)) throw NOT_OURS
  if (params.error) throw brokerError('flowFailed', { error: params.error, description: params.error_description })
  if (params.result && !params.access_token) return { delivery: 'code', result: await client.redeem(params.result) }
  return { delivery: posted ? 'form_post' : 'query', result: params }
}

async function readParams(
  req: IncomingMessage,
  url: URL,
): Promise<{ params: Record<string, string>; posted: boolean }> {
  const params = Object.fromEntries(url.searchParams)
  if (req.method !== 'POST') return { params, posted: false }
  let raw = ''
  for await (const chunk of req) {
    raw += chunk
    if (raw.length > 1_000_000) break
  }
  return { params: { ...params, ...Object.fromEntries(new URLSearchParams(raw)) }, posted: true }
}
