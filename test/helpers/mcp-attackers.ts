import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'

/** What an authorization server of the tests received at its token endpoint. */
export interface TokenCall {
  authorization: string
  params: Record<string, string>
}

/**
 * A small authorization server (RFC 8414 metadata, RFC 7591 registration, a code flow answering at
 * once) that behaves honestly or, by its options, as a hostile one: its metadata may name another
 * server's authorization endpoint, its registration may answer another server's client_id. Its
 * /authorize checks the redirect URI against the registered ones, as real servers do; its token
 * endpoint records every call (for a hostile one: what it was handed).
 */
export interface TestAuthorizationServer {
  issuer: string
  /** Every call to the token endpoint. */
  tokenCalls: TokenCall[]
  /** Registration requests received (their JSON). */
  registrations: Array<Record<string, unknown>>
  /** Metadata over the defaults, read at each request. */
  metadata: Record<string, unknown>
  /** The client_id the next registration answers (default: one of its own). */
  clientId?: string
  /** Called at each /authorize before it answers (a test switches what a resource names there). */
  onAuthorize?: (query: URLSearchParams) => void
  /** Replaces /authorize: returns where to send the browser (a hostile server bouncing to another). */
  authorize?: (query: URLSearchParams) => string
  /**
   * Takes client ID metadata documents (its metadata says so): a client_id that is an https URL is fetched
   * (through `fetchDocument`, which may reach an https URL's http listener) and checked: its client_id is its
   * own URL, the redirect URI is one it lists, the client is public. Each document fetched is kept here.
   */
  documents?: Array<Record<string, unknown>>
  fetchDocument?: (url: string) => Promise<Response>
  stop(): Promise<void>
}

const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(status, { 'content-type': 'application/json', ...headers })
  res.end(JSON.stringify(body))
}

const read = (req: IncomingMessage): Promise<string> =>
  new Promise((resolve) => {
    let raw = ''
    req.on('data', (d: Buffer) => (raw += d))
    req.on('end', () => resolve(raw))
  })

/** Starts an authorization server on a loopback port of its own; `name` prefixes its client ids and tokens. */
export async function startTestAuthorizationServer(name: string): Promise<TestAuthorizationServer> {
  const clients = new Map<string, string[]>()
  const codes = new Map<string, { client: string; redirect: string }>()
  let n = 0
  const as: TestAuthorizationServer = {
    issuer: '',
    tokenCalls: [],
    registrations: [],
    metadata: {},
    stop: async () => undefined,
  }
  const server: Server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', as.issuer)
    const body = req.method === 'POST' ? await read(req) : ''
    if (url.pathname === '/.well-known/oauth-authorization-server')
      return json(res, 200, {
        issuer: as.issuer,
        authorization_endpoint: `${as.issuer}/authorize`,
        token_endpoint: `${as.issuer}/token`,
        registration_endpoint: `${as.issuer}/register`,
        token_endpoint_auth_methods_supported: ['client_secret_basic', 'none'],
        ...(as.documents ? { client_id_metadata_document_supported: true } : {}),
        response_types_supported: ['code'],
        code_challenge_methods_supported: ['S256'],
        ...as.metadata,
      })
    if (url.pathname === '/register') {
      const asked = JSON.parse(body) as Record<string, unknown>
      as.registrations.push(asked)
      const clientId = as.clientId ?? `${name}-client-${++n}`
      clients.set(clientId, (asked.redirect_uris as string[] | undefined) ?? [])
      return json(res, 201, { ...asked, client_id: clientId, client_secret: `${name}-secret` })
    }
    if (url.pathname === '/authorize') {
      as.onAuthorize?.(url.searchParams)
      if (as.authorize) {
        res.writeHead(302, { location: as.authorize(url.searchParams) })
        return res.end()
      }
      const client = url.searchParams.get('client_id') ?? ''
      const redirect = url.searchParams.get('redirect_uri') ?? ''
      if (as.documents && client.startsWith('https://')) {
        const doc = (await (await (as.fetchDocument ?? fetch)(client)).json()) as Record<string, unknown>
        as.documents.push(doc)
        const listed = Array.isArray(doc.redirect_uris) && doc.redirect_uris.includes(redirect)
        if (doc.client_id !== client || !listed || doc.token_endpoint_auth_method !== 'none')
          return json(res, 400, { error: 'invalid_client', error_description: 'bad client metadata document' })
        clients.set(client, [redirect])
      }
      // As real servers do: a redirect URI the client did not register is an error page, never a redirect.
      if (!clients.get(client)?.includes(redirect)) return json(res, 400, { error: 'invalid_request' })
      const code = `${name}-code-${++n}`
      codes.set(code, { client, redirect })
      const back = new URL(redirect)
      back.searchParams.set('code', code)
      back.searchParams.set('state', url.searchParams.get('state') ?? '')
      res.writeHead(302, { location: back.toString() })
      return res.end()
    }
    if (url.pathname === '/token') {
      const params = Object.fromEntries(new URLSearchParams(body))
      as.tokenCalls.push({ authorization: req.headers.authorization ?? '', params })
      if (params.grant_type === 'refresh_token')
        return json(res, 200, { access_token: `${name}-at-refreshed`, token_type: 'Bearer', expires_in: 3600 })
      const issued = codes.get(params.code ?? '')
      if (!issued || issued.redirect !== params.redirect_uri) return json(res, 400, { error: 'invalid_grant' })
      codes.delete(params.code!)
      return json(res, 200, {
        access_token: `${name}-at`,
        refresh_token: `${name}-rt`,
        token_type: 'Bearer',
        expires_in: 3600,
      })
    }
    json(res, 404, { error: 'not_found' })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
  const address = server.address()
  as.issuer = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`
  as.stop = () =>
    new Promise((r) => {
      server.closeAllConnections()
      server.close(() => r())
    })
  return as
}

/** An MCP server whose protected resource metadata names whichever authorization server `names` says, at each look. */
export interface HostileResource {
  resource: string
  /** The authorization server its metadata names now. */
  names: string
  /** How many times its metadata was read. */
  looks: number
  stop(): Promise<void>
}

/** Starts a protected resource (RFC 9728, MCP's 401 challenge) that changes its authorization server at will. */
export async function startHostileResource(names: string): Promise<HostileResource> {
  const r: HostileResource = { resource: '', names, looks: 0, stop: async () => undefined }
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0]
    const origin = new URL(r.resource).origin
    if (path === '/prm') {
      r.looks++
      return json(res, 200, { resource: r.resource, authorization_servers: [r.names] })
    }
    if (path === '/mcp')
      return json(
        res,
        401,
        { error: 'unauthorized' },
        { 'www-authenticate': `Bearer resource_metadata="${origin}/prm"` },
      )
    json(res, 404, { error: 'not_found' })
  })
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', () => ok()))
  const address = server.address()
  r.resource = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/mcp`
  r.stop = () =>
    new Promise((ok) => {
      server.closeAllConnections()
      server.close(() => ok())
    })
  return r
}
