import type { Server } from 'node:http'
import { DemoInMemoryAuthProvider } from '@modelcontextprotocol/sdk/examples/server/demoInMemoryOAuthProvider.js'
import { authorizationHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/authorize.js'
import { metadataHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/metadata.js'
import { clientRegistrationHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/register.js'
import { tokenHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/token.js'
import { requireBearerAuth } from '@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js'
import {
  createOAuthMetadata,
  mcpAuthMetadataRouter,
  mcpAuthRouter,
} from '@modelcontextprotocol/sdk/server/auth/router.js'
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import express from 'express'
import { freePort } from './ports.js'

/**
 * How an MCP server built with the official SDK publishes its authorization (every OAuth endpoint is the
 * SDK's own code; only the tool is ours):
 * - `sdk-default`: `mcpAuthRouter` without `resourceServerUrl`: one protected resource document at the root,
 *   naming the origin (`http://host/`), the authorization server on the same origin.
 * - `path-aware`: `mcpAuthRouter` with `resourceServerUrl` = the MCP endpoint: the document at
 *   `/.well-known/oauth-protected-resource/mcp`, naming the endpoint itself.
 * - `no-prm`: the MCP 2025-03-26 shape: RFC 8414 metadata at the origin, no protected resource metadata.
 * - `no-metadata`: no metadata at all: `/authorize`, `/token`, `/register` on the origin.
 * - `split`: the authorization server on its own origin; the resource server publishes path-aware metadata
 *   naming it and checks tokens with the authorization server's verifier.
 */
export type McpShape = 'sdk-default' | 'path-aware' | 'no-prm' | 'no-metadata' | 'split'

export interface McpSdkServer {
  /** The MCP endpoint, `http://127.0.0.1:<port>/mcp`. */
  resource: string
  /** The authorization server's issuer as its metadata says it (the SDK writes a trailing slash). */
  issuer: string
  /** Method and path of each request the authorization server received. */
  requests: string[]
  /** Forgets every client it registered (a restart of a server keeping them in memory). */
  forgetClients(): void
  stop(): Promise<void>
}

const listen = (app: express.Express, port: number): Promise<Server> =>
  new Promise((resolve) => {
    const server = app.listen(port, '127.0.0.1', () => resolve(server))
  })

/** An MCP server with one tool, `whoami`, behind the SDK's bearer middleware. */
function mountMcp(app: express.Express, provider: { current: DemoInMemoryAuthProvider }, metadataUrl?: string) {
  const auth = requireBearerAuth({
    verifier: { verifyAccessToken: (token) => provider.current.verifyAccessToken(token) },
    ...(metadataUrl ? { resourceMetadataUrl: metadataUrl } : {}),
  })
  app.post('/mcp', auth, async (req, res) => {
    const server = new McpServer({ name: 'broker-test', version: '1.0.0' })
    server.registerTool('whoami', { description: 'Who the token is for' }, async (extra) => ({
      content: [{ type: 'text', text: String(extra.authInfo?.clientId ?? 'nobody') }],
    }))
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined })
    res.on('close', () => void transport.close())
    await server.connect(transport)
    await transport.handleRequest(req, res, req.body)
  })
  app.get('/mcp', auth, (_req, res) => res.status(405).end())
}

/** Starts an MCP server of `shape`, built from the SDK's own auth code and its demo provider. */
export async function startMcpSdkServer(shape: McpShape): Promise<McpSdkServer> {
  const port = await freePort()
  const origin = `http://127.0.0.1:${port}`
  const provider = { current: new DemoInMemoryAuthProvider() }
  // Handlers read the provider at each request: forgetting clients swaps it for a fresh one. The token
  // endpoint's client check holds on to the clients store it was made with: that one delegates too.
  const clients = {
    getClient: (id: string) => provider.current.clientsStore.getClient(id),
    registerClient: (c: Parameters<DemoInMemoryAuthProvider['clientsStore']['registerClient']>[0]) =>
      provider.current.clientsStore.registerClient(c),
  } as DemoInMemoryAuthProvider['clientsStore']
  const live = new Proxy({} as DemoInMemoryAuthProvider, {
    get: (_t, key) => {
      if (key === 'clientsStore') return clients
      const value = Reflect.get(provider.current, key)
      return typeof value === 'function' ? value.bind(provider.current) : value
    },
  })
  const requests: string[] = []
  const servers: Server[] = []
  const app = express()
  app.use((req, _res, next) => {
    requests.push(`${req.method} ${req.path}`)
    next()
  })
  app.use(express.json())
  let issuer = `${origin}/`
  const scopesSupported = ['mcp:tools']
  if (shape === 'sdk-default' || shape === 'path-aware') {
    app.use(
      mcpAuthRouter({
        provider: live,
        issuerUrl: new URL(origin),
        scopesSupported,
        ...(shape === 'path-aware' ? { resourceServerUrl: new URL(`${origin}/mcp`) } : {}),
      }),
    )
    const prm = `${origin}/.well-known/oauth-protected-resource${shape === 'path-aware' ? '/mcp' : ''}`
    mountMcp(app, provider, prm)
  } else if (shape === 'no-prm' || shape === 'no-metadata') {
    // The SDK's handlers mounted one by one, as mcpAuthRouter does, without the protected resource metadata.
    if (shape === 'no-prm') {
      const oauthMetadata = createOAuthMetadata({ provider: live, issuerUrl: new URL(origin), scopesSupported })
      app.use('/.well-known/oauth-authorization-server', metadataHandler(oauthMetadata))
    } else issuer = origin
    app.use('/authorize', authorizationHandler({ provider: live }))
    app.use('/token', tokenHandler({ provider: live }))
    app.use('/register', clientRegistrationHandler({ clientsStore: live.clientsStore }))
    mountMcp(app, provider)
  } else {
    const asPort = await freePort()
    const asOrigin = `http://127.0.0.1:${asPort}`
    issuer = `${asOrigin}/`
    const asApp = express()
    asApp.use((req, _res, next) => {
      requests.push(`${req.method} ${req.path}`)
      next()
    })
    asApp.use(express.json())
    asApp.use(mcpAuthRouter({ provider: live, issuerUrl: new URL(asOrigin), scopesSupported }))
    servers.push(await listen(asApp, asPort))
    const oauthMetadata = createOAuthMetadata({ provider: live, issuerUrl: new URL(asOrigin), scopesSupported })
    app.use(mcpAuthMetadataRouter({ oauthMetadata, resourceServerUrl: new URL(`${origin}/mcp`), scopesSupported }))
    mountMcp(app, provider, `${origin}/.well-known/oauth-protected-resource/mcp`)
  }
  servers.push(await listen(app, port))
  return {
    resource: `${origin}/mcp`,
    issuer,
    requests,
    forgetClients: () => {
      provider.current = new DemoInMemoryAuthProvider()
    },
    stop: async () => {
      for (const s of servers) s.closeAllConnections()
      await Promise.all(servers.map((s) => new Promise((r) => s.close(r))))
    },
  }
}

/** Lists the MCP server's tools and calls one (`whoami` by default) with the SDK's own client and a bearer token. */
export async function callWithSdkClient(
  resource: string,
  token: string,
  tool = 'whoami',
  args: Record<string, unknown> = {},
): Promise<{ tools: string[]; whoami: string }> {
  const client = new Client({ name: 'broker-test-client', version: '1.0.0' })
  const transport = new StreamableHTTPClientTransport(new URL(resource), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  })
  await client.connect(transport)
  try {
    const tools = (await client.listTools()).tools.map((t) => t.name)
    const result = await client.callTool({ name: tool, arguments: args })
    const content = result.content as Array<{ type: string; text?: string }>
    return { tools, whoami: content[0]?.text ?? '' }
  } finally {
    await client.close()
  }
}
