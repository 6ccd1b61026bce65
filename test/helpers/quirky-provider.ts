import { createServer, type IncomingMessage, type Server } from 'node:http'

/** What a quirky token endpoint answers: status, body (JSON unless a string) and headers. */
export interface TokenAnswer {
  status?: number
  body?: unknown
  headers?: Record<string, string>
}

/** A token request as the provider saw it. */
export interface SeenTokenRequest {
  quirk: string
  headers: IncomingMessage['headers']
  body: string
}

/**
 * A hand-made OAuth 2 provider whose answers copy real providers' quirks. Each quirk has its own
 * paths: GET /<quirk>/authorize redirects back with a code (and the quirk's extra parameters);
 * POST /<quirk>/token answers the way that provider does.
 */
export interface QuirkyProvider {
  url: string
  authorizeUrl(quirk: string): string
  tokenUrl(quirk: string): string
  tokenRequests: SeenTokenRequest[]
  close(): Promise<void>
}

export interface Quirk {
  /** Extra parameters of the authorization response (QuickBooks' realmId …). */
  authorize?: Record<string, string>
  /** Answer the authorization request with a form that POSTs the response back (response_mode=form_post, Apple). */
  formPost?: boolean
  token: TokenAnswer
}

export async function startQuirkyProvider(quirks: Record<string, Quirk>): Promise<QuirkyProvider> {
  const tokenRequests: SeenTokenRequest[] = []
  const server: Server = createServer((req, res) => {
    let raw = ''
    req.on('data', (d) => (raw += d))
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://localhost')
      const [, name, step] = url.pathname.split('/')
      const quirk = quirks[name ?? '']
      if (!quirk) {
        res.writeHead(404).end()
        return
      }
      if (step === 'authorize' && req.method === 'GET') {
        const back = new URL(url.searchParams.get('redirect_uri') ?? '')
        const answer = { code: `code-${name}`, state: url.searchParams.get('state') ?? '', ...quirk.authorize }
        if (quirk.formPost) {
          const inputs = Object.entries(answer).map(
            ([k, v]) => `<input type="hidden" name="${k}" value="${escape(v)}">`,
          )
          res
            .writeHead(200, { 'content-type': 'text/html' })
            .end(`<form method="post" action="${back}">${inputs.join('')}</form>`)
          return
        }
        for (const [k, v] of Object.entries(answer)) back.searchParams.set(k, v)
        res.writeHead(302, { location: back.toString() }).end()
        return
      }
      if (step === 'token' && req.method === 'POST') {
        tokenRequests.push({ quirk: name!, headers: req.headers, body: raw })
        const { status = 200, body = {}, headers = {} } = quirk.token
        const text = typeof body === 'string' ? body : JSON.stringify(body)
        res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(text)
        return
      }
      res.writeHead(404).end()
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
  const address = server.address()
  const port = typeof address === 'object' && address ? address.port : 0
  const url = `http://127.0.0.1:${port}`
  return {
    url,
    authorizeUrl: (quirk) => `${url}/${quirk}/authorize`,
    tokenUrl: (quirk) => `${url}/${quirk}/token`,
    tokenRequests,
    close: () => new Promise((r) => server.close(() => r())),
  }
}

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
