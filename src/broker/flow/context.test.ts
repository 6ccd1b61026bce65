import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createGzip } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { FlowError } from '../../../flows/contract.js'
import { providerFetch } from './context.js'

const CAP = 1_048_576
// Far longer than the test may take: an answer read whole would end in PROVIDER_TIMEOUT, not the size error.
const TIMEOUT_MS = 25_000

type Route = (req: IncomingMessage, res: ServerResponse) => void
const routes = new Map<string, Route>()
let server: Server
let origin = ''

/** What an endless answer managed to send before the client hung up. */
interface Flood {
  sent: number
  closed: Promise<void>
}

/** Answers with chunks of `chunk` for as long as the client reads, honouring back-pressure. */
function pump(res: ServerResponse, chunk: Buffer, state: Flood): void {
  const more = () => {
    while (!res.destroyed) {
      state.sent += chunk.length
      if (!res.write(chunk)) return void res.once('drain', more)
    }
  }
  more()
}

function endless(headers: Record<string, string> = {}): { route: Route; flood: Flood } {
  let closed!: () => void
  const state: Flood = { sent: 0, closed: new Promise((r) => (closed = r)) }
  const route: Route = (_req, res) => {
    res.on('close', () => closed())
    res.writeHead(200, { 'content-type': 'application/json', ...headers })
    pump(res, Buffer.alloc(64 * 1024, 'a'), state)
  }
  return { route, flood: state }
}

const sendError = async (path: string): Promise<FlowError> => {
  const err = await providerFetch(`${origin}${path}`, {}, TIMEOUT_MS).then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(err).toBeInstanceOf(FlowError)
  return err as FlowError
}

beforeAll(async () => {
  server = createServer((req, res) => routes.get(new URL(req.url!, 'http://x').pathname)!(req, res))
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})

afterAll(async () => {
  server.closeAllConnections()
  await new Promise((r) => server.close(r))
})

describe('providerFetch', () => {
  it('fails with the size error on an endless answer, having read little more than the cap', async () => {
    const { route, flood } = endless()
    routes.set('/endless', route)
    const err = await sendError('/endless?client_secret=do-not-print')
    expect(err).toMatchObject({
      oauthError: 'server_error',
      brokerCode: 'PROVIDER_ERROR',
      message: `Could not reach ${origin}: answer larger than ${CAP} bytes`,
    })
    expect(err.message).not.toContain('do-not-print')
    // The connection is closed: the provider stops, having filled no more than the socket buffers past the cap.
    await flood.closed
    expect(flood.sent).toBeLessThan(16 * CAP)
  })

  it('counts the decoded bytes of a compressed answer', async () => {
    let closed!: () => void
    const done = new Promise<void>((r) => (closed = r))
    let stopped = false
    routes.set('/gzip', (_req, res) => {
      const gzip = createGzip()
      res.on('close', () => {
        stopped = true
        gzip.destroy()
        closed()
      })
      res.writeHead(200, { 'content-encoding': 'gzip' })
      gzip.pipe(res)
      // A few KiB on the wire inflate to far more than the cap.
      const zeros = Buffer.alloc(1024 * 1024)
      const more = () => {
        while (!stopped && gzip.write(zeros));
        if (!stopped) gzip.once('drain', more)
      }
      more()
    })
    const err = await sendError('/gzip')
    expect(err.message).toBe(`Could not reach ${origin}: answer larger than ${CAP} bytes`)
    await done
  })

  it('reads an answer of exactly the cap, and refuses one byte more', async () => {
    routes.set('/cap', (_req, res) => res.end(Buffer.alloc(CAP, 'b')))
    routes.set('/over', (_req, res) => res.end(Buffer.alloc(CAP + 1, 'b')))
    const answer = await providerFetch(`${origin}/cap`, {}, TIMEOUT_MS)
    expect(answer.body).toHaveLength(CAP)
    expect((await sendError('/over')).message).toMatch(/answer larger than 1048576 bytes$/)
  })

  it('reads a normal answer whole, with characters split across chunks', async () => {
    const text = JSON.stringify({ access_token: 'tök€n-🔑', scope: 'read' })
    const bytes = Buffer.from(text)
    routes.set('/split', async (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'x-provider': 'here' })
      res.flushHeaders()
      // One byte at a time, each its own chunk: every multi-byte character arrives in pieces.
      for (const byte of bytes) {
        res.write(Buffer.of(byte))
        await new Promise((r) => setImmediate(r))
      }
      res.end()
    })
    const answer = await providerFetch(`${origin}/split`, {}, TIMEOUT_MS)
    expect(answer).toMatchObject({
      status: 200,
      body: text,
      headers: { 'content-type': 'application/json', 'x-provider': 'here' },
    })
  })

  it('reads an empty answer as an empty body', async () => {
    routes.set('/empty', (_req, res) => {
      res.writeHead(204)
      res.end()
    })
    expect(await providerFetch(`${origin}/empty`, {}, TIMEOUT_MS)).toMatchObject({ status: 204, body: '' })
  })

  it('fails, without waiting for its timeout, on an answer cut short by the connection closing', async () => {
    routes.set('/cut', (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': 100 })
      res.write('{"access_token":"', () => res.socket?.destroy())
    })
    const t0 = Date.now()
    const err = await sendError('/cut')
    expect(err.message).toMatch(new RegExp(`^Could not reach ${origin}`))
    expect(Date.now() - t0).toBeLessThan(TIMEOUT_MS / 2)
  })
})
