import { createServer, type Server } from 'node:http'
import { createRemoteJWKSet, jwtVerify } from 'jose'

/** How the resource tells clients where its metadata is (RFC 9728): one way at a time, as servers do. */
export type MetadataWay = 'challenge' | 'well-known-path' | 'well-known-root'

export interface ProtectedResourceServer {
  /** The resource's URL, e.g. `http://127.0.0.1:4321/mcp`. */
  resource: string
  /** Method and path of every request it received. */
  requests: string[]
  /** What its metadata document says its resource is (another value spoils it). */
  claimed: string
  stop(): Promise<void>
}

/**
 * A protected resource of the tests' own, shaped like a remote MCP server: an unauthenticated GET
 * of `/mcp` answers 401 with a Bearer challenge (naming its metadata when `way` is `challenge`), its
 * RFC 9728 metadata names `issuer` as its authorization server, and a request with a Bearer access
 * token answers 200 `{sub, scope}` only when the token is a JWT of `issuer` for this very resource.
 */
export async function startProtectedResource(
  issuer: string,
  opts: { way?: MetadataWay; scope?: string } = {},
): Promise<ProtectedResourceServer> {
  const way = opts.way ?? 'challenge'
  const jwks = createRemoteJWKSet(new URL(`${issuer}/jwks`))
  const p: ProtectedResourceServer = { resource: '', requests: [], claimed: '', stop: async () => undefined }
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0]!
    p.requests.push(`${req.method} ${path}`)
    const origin = new URL(p.resource).origin
    const json = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'application/json', ...headers })
      res.end(JSON.stringify(body))
    }
    const metadata = () =>
      json(200, { resource: p.claimed, authorization_servers: [issuer], scopes_supported: ['mcp:tools', 'mcp:read'] })
    if (way === 'challenge' && path === '/meta/prm') return metadata()
    if (way === 'well-known-path' && path === '/.well-known/oauth-protected-resource/mcp') return metadata()
    if (way === 'well-known-root' && path === '/.well-known/oauth-protected-resource') return metadata()
    if (path !== '/mcp') return json(404, { error: 'not_found' })
    const token = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1]
    const challenge = [
      'Bearer realm="mcp"',
      ...(way === 'challenge' ? [`resource_metadata="${origin}/meta/prm"`] : []),
      ...(opts.scope ? [`scope="${opts.scope}"`] : []),
    ].join(', ')
    if (!token) return json(401, { error: 'unauthorized' }, { 'www-authenticate': challenge })
    jwtVerify(token, jwks, { issuer, audience: p.resource }).then(
      ({ payload }) => json(200, { sub: payload.sub ?? null, scope: payload.scope ?? null }),
      () => json(401, { error: 'invalid_token' }, { 'www-authenticate': `${challenge}, error="invalid_token"` }),
    )
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
  const address = server.address()
  p.resource = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/mcp`
  p.claimed = p.resource
  p.stop = () =>
    new Promise((r) => {
      server.closeAllConnections()
      server.close(() => r())
    })
  return p
}
