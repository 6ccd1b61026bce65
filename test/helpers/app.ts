import { createServer, type Server } from 'node:http'

export interface Received {
  method: string
  url: URL
  query: Record<string, string>
  body: Record<string, string>
}

/** A small app with a callback endpoint that records what the broker delivered. */
export interface CallbackApp {
  url: string
  callback: string
  received: Received[]
  close(): Promise<void>
}

export async function startCallbackApp(): Promise<CallbackApp> {
  const received: Received[] = []
  const server: Server = createServer((req, res) => {
    let raw = ''
    req.on('data', (d) => (raw += d))
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://localhost')
      received.push({
        method: req.method ?? 'GET',
        url,
        query: Object.fromEntries(url.searchParams),
        body: Object.fromEntries(new URLSearchParams(raw)),
      })
      res.writeHead(200, { 'content-type': 'text/plain' })
      res.end('app got it')
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
  const address = server.address()
  const port = typeof address === 'object' && address ? address.port : 0
  const url = `http://localhost:${port}`
  return { url, callback: `${url}/callback`, received, close: () => new Promise((r) => server.close(() => r())) }
}
