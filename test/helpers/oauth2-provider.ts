import { OAuth2Server } from 'oauth2-mock-server'

export interface OAuth2Provider {
  server: OAuth2Server
  issuer: string
  authorizeUrl: string
  tokenUrl: string
  /** Every token request body the provider received. */
  tokenRequests: Array<Record<string, string>>
  /** Every authorize query the provider received. */
  authorizeRequests: Array<Record<string, string>>
  stop(): Promise<void>
}

/** A real OAuth 2 server from npm (oauth2-mock-server), on a free loopback port. */
export async function startOAuth2Provider(): Promise<OAuth2Provider> {
  const server = new OAuth2Server()
  await server.issuer.keys.generate('RS256')
  await server.start(0, '127.0.0.1')
  const issuer = server.issuer.url!
  const tokenRequests: Array<Record<string, string>> = []
  const authorizeRequests: Array<Record<string, string>> = []
  server.service.on('beforeResponse', (_response: unknown, req: { body: Record<string, string> }) => {
    tokenRequests.push({ ...req.body })
  })
  server.service.on(
    'beforeAuthorizeRedirect',
    (_authorizeRedirectUri: unknown, req: { query: Record<string, string> }) => {
      authorizeRequests.push({ ...req.query })
    },
  )
  return {
    server,
    issuer,
    authorizeUrl: `${issuer}/authorize`,
    tokenUrl: `${issuer}/token`,
    tokenRequests,
    authorizeRequests,
    stop: () => server.stop(),
  }
}
