import { generateKeyPairSync, type KeyObject } from 'node:crypto'
import { createServer, type Server } from 'node:http'
import Provider from 'oidc-provider'
import type { Browser, BrowseResult } from './browser.js'

/** The scopes every resource server of the strict provider has (resource indicators). */
export const RESOURCE_SCOPES = 'mcp:tools mcp:read'

/** Secrets of the strict provider's confidential clients (HS256 needs 32 bytes). */
export const CLIENT_SECRET = 'a-client-secret-of-at-least-32-bytes!'

export interface StrictProvider {
  issuer: string
  /** Method and path of every request the provider received, in order. */
  requests: string[]
  /** The private key of the `jwt-client` (its public half is registered), as PKCS#8 PEM. */
  clientKeyPem: string
  clientKey: KeyObject
  stop(): Promise<void>
}

/**
 * panva's oidc-provider 9, configured strictly: PKCE required for every client, exact redirect
 * URIs, refresh tokens rotated, `iss` in every authorization response, and one client per
 * token endpoint authentication method plus one that must push its authorization requests; open
 * dynamic registration, and resource indicators whose access tokens are JWTs for the resource.
 * Logins and consents go through its devInteractions forms (see `passInteractions`).
 */
export async function startStrictProvider(port: number, redirectUri: string): Promise<StrictProvider> {
  const issuer = `http://127.0.0.1:${port}`
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const signing = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey
  const base = {
    redirect_uris: [redirectUri],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
  }
  const provider = new Provider(issuer, {
    clients: [
      {
        ...base,
        client_id: 'basic-client',
        client_secret: CLIENT_SECRET,
        token_endpoint_auth_method: 'client_secret_basic',
      },
      {
        ...base,
        client_id: 'post-client',
        client_secret: CLIENT_SECRET,
        token_endpoint_auth_method: 'client_secret_post',
      },
      { ...base, client_id: 'public-client', token_endpoint_auth_method: 'none' },
      {
        ...base,
        client_id: 'jwt-client',
        token_endpoint_auth_method: 'private_key_jwt',
        jwks: { keys: [{ ...publicKey.export({ format: 'jwk' }), use: 'sig' }] },
      },
      {
        ...base,
        client_id: 'secret-jwt-client',
        client_secret: CLIENT_SECRET,
        token_endpoint_auth_method: 'client_secret_jwt',
      },
      {
        ...base,
        client_id: 'par-client',
        client_secret: CLIENT_SECRET,
        token_endpoint_auth_method: 'client_secret_basic',
        require_pushed_authorization_requests: true,
      },
    ],
    jwks: { keys: [{ ...signing.export({ format: 'jwk' }), kid: 'sig-1', use: 'sig', alg: 'RS256' }] },
    pkce: { required: () => true },
    features: {
      devInteractions: { enabled: true },
      pushedAuthorizationRequests: { enabled: true },
      // Open dynamic registration (RFC 7591), as MCP servers' authorization servers offer it.
      registration: { enabled: true },
      // Client credentials (RFC 6749 §4.4), for a client registered for that grant alone.
      clientCredentials: { enabled: true },
      // RFC 8707: an access token asked for a resource is a JWT whose audience is that resource.
      resourceIndicators: {
        enabled: true,
        defaultResource: async (_ctx: unknown, _client: unknown, oneOf?: string) => oneOf,
        useGrantedResource: async () => true,
        getResourceServerInfo: async (_ctx: unknown, resource: string) => ({
          scope: RESOURCE_SCOPES,
          audience: resource,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'RS256' } },
        }),
      },
    },
    // Refresh tokens for every client (not only with offline_access), rotated on every use.
    issueRefreshToken: async () => true,
    rotateRefreshToken: () => true,
    findAccount: async (_ctx: unknown, sub: string) => ({ accountId: sub, claims: async () => ({ sub }) }),
    cookies: { keys: ['strict-provider-cookie-key'] },
    // Lifetimes of its own, so the provider does not print a notice per default it uses.
    ttl: { AccessToken: 600, Grant: 600, IdToken: 600, Interaction: 600, RefreshToken: 600, Session: 600 },
  })
  const requests: string[] = []
  const handle = provider.callback()
  const server: Server = createServer((req, res) => {
    requests.push(`${req.method} ${(req.url ?? '').split('?')[0]}`)
    void handle(req, res)
  })
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', () => r()))
  return {
    issuer,
    requests,
    clientKey: privateKey,
    clientKeyPem: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    stop: () =>
      new Promise((r) => {
        server.closeAllConnections()
        server.close(() => r())
      }),
  }
}

/** Signs in as `alice` and consents on the provider's devInteractions pages, until the browser leaves them. */
export async function passInteractions(browser: Browser, first: BrowseResult): Promise<BrowseResult> {
  let res = first
  for (let i = 0; i < 4 && res.status === 200 && /\/interaction\//.test(res.url); i++) {
    const prompt = /name="prompt" value="(\w+)"/.exec(res.body)?.[1]
    const body = prompt === 'login' ? 'prompt=login&login=alice&password=any' : `prompt=${prompt}`
    res = await browser.go(res.url, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    })
  }
  return res
}
