import { generateKeyPairSync, randomBytes } from 'node:crypto'
import { createServer, type Server } from 'node:http'
import Provider from 'oidc-provider'
import { Browser, type BrowseResult } from './browser.js'
import { CLIENT_SECRET, passInteractions } from './oidc-provider.js'

export { CLIENT_SECRET }

/** What a test may change in how the provider's device flow behaves (oidc-provider itself sends no interval, never slow_down). */
export interface DeviceKnobs {
  /** The `interval` added to device authorization answers (seconds); none when undefined. */
  interval?: number
  /** How many of the next device_code token requests are answered `slow_down` instead. */
  slowDowns: number
}

export interface DpopProvider {
  issuer: string
  /** Method and path of every request, in order, with the time it arrived (ms) and its Authorization scheme. */
  requests: Array<{ at: number; line: string; dpop: boolean; scheme?: string }>
  device: DeviceKnobs
  stop(): Promise<void>
}

/**
 * panva's oidc-provider 9 with DPoP (RFC 9449) whose nonces are required, the device authorization
 * grant (RFC 8628), client credentials, PAR and introspection (the tests' resource asks it whether
 * a token is bound to a key). Its clients must use DPoP (`dpop_bound_access_tokens`): a token
 * without a proof is refused. The token endpoint's device polls can be answered `slow_down`.
 */
export async function startDpopProvider(port: number, redirectUri: string): Promise<DpopProvider> {
  const issuer = `http://127.0.0.1:${port}`
  const signing = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey
  const grants = ['authorization_code', 'refresh_token', 'urn:ietf:params:oauth:grant-type:device_code']
  const base = { redirect_uris: [redirectUri], response_types: ['code'], dpop_bound_access_tokens: true }
  const provider = new Provider(issuer, {
    clients: [
      { ...base, client_id: 'dpop-public', grant_types: grants, token_endpoint_auth_method: 'none' },
      {
        ...base,
        client_id: 'dpop-basic',
        client_secret: CLIENT_SECRET,
        grant_types: [...grants, 'client_credentials'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
      // Without dpop_bound_access_tokens: the device flow without DPoP.
      {
        client_id: 'device-public',
        grant_types: ['urn:ietf:params:oauth:grant-type:device_code', 'refresh_token'],
        response_types: [],
        redirect_uris: [],
        token_endpoint_auth_method: 'none',
      },
      // The tests' protected resource introspects tokens with these credentials.
      {
        client_id: 'resource',
        client_secret: CLIENT_SECRET,
        grant_types: [],
        response_types: [],
        redirect_uris: [],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    jwks: { keys: [{ ...signing.export({ format: 'jwk' }), kid: 'sig-1', use: 'sig', alg: 'RS256' }] },
    pkce: { required: () => true },
    features: {
      devInteractions: { enabled: true },
      pushedAuthorizationRequests: { enabled: true },
      clientCredentials: { enabled: true },
      introspection: { enabled: true, allowedPolicy: async () => true },
      deviceFlow: { enabled: true },
      dPoP: { enabled: true, nonceSecret: randomBytes(32), requireNonce: () => true },
    },
    issueRefreshToken: async () => true,
    findAccount: async (_ctx: unknown, sub: string) => ({ accountId: sub, claims: async () => ({ sub }) }),
    cookies: { keys: ['dpop-provider-cookie-key'] },
    ttl: {
      AccessToken: 600,
      ClientCredentials: 600,
      DeviceCode: 600,
      Grant: 600,
      IdToken: 600,
      Interaction: 600,
      RefreshToken: 600,
      Session: 600,
    },
  })
  const device: DeviceKnobs = { interval: undefined, slowDowns: 0 }
  provider.use(async (ctx, next) => {
    if (ctx.method === 'POST' && ctx.path === '/token' && device.slowDowns > 0) {
      device.slowDowns--
      ctx.status = 400
      ctx.body = { error: 'slow_down', error_description: 'poll less often' }
      return
    }
    await next()
    if (ctx.method === 'POST' && ctx.path === '/device/auth' && device.interval !== undefined && isObject(ctx.body))
      ctx.body = { ...ctx.body, interval: device.interval }
  })
  const requests: DpopProvider['requests'] = []
  const handle = provider.callback()
  const server: Server = createServer((req, res) => {
    const line = `${req.method} ${(req.url ?? '').split('?')[0]}`
    const scheme = req.headers.authorization?.split(' ')[0]
    requests.push({ at: Date.now(), line, dpop: typeof req.headers.dpop === 'string', scheme })
    void handle(req, res)
  })
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', () => r()))
  return {
    issuer,
    requests,
    device,
    stop: () =>
      new Promise((r) => {
        server.closeAllConnections()
        server.close(() => r())
      }),
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v)

/** The hidden fields of the provider's device form (`op.deviceConfirmForm`, or the user code input form). */
export function deviceForm(html: string): { action: string; fields: Record<string, string> } {
  const form = /<form\b[^>]*action="([^"]*)"[^>]*>([\s\S]*?)<\/form>/i.exec(html)
  if (!form) throw new Error(`no form on the page: ${html.slice(0, 300)}`)
  const fields: Record<string, string> = {}
  for (const input of form[2]!.matchAll(/<input\b[^>]*>/gi)) {
    const name = /name="([^"]*)"/.exec(input[0])?.[1]
    const value = /value="([^"]*)"/.exec(input[0])?.[1] ?? ''
    if (name) fields[name] = value
  }
  return { action: form[1]!, fields }
}

/** The user at the provider's device page (reached through /start): confirms (or aborts), signs in, consents. */
export async function decideDevice(startUrl: string, abort = false): Promise<BrowseResult> {
  const browser = new Browser()
  let page = await browser.go(startUrl)
  // The page that posts the code of verification_uri_complete, then the confirmation.
  for (let i = 0; i < 4 && /<form\b[^>]*action="[^"]*\/device"/.test(page.body); i++) {
    const { action, fields } = deviceForm(page.body)
    const extra: Record<string, string> = abort && page.body.includes('op.deviceConfirmForm') ? { abort: 'yes' } : {}
    page = await browser.go(new URL(action, page.url).toString(), {
      method: 'POST',
      body: new URLSearchParams({ ...fields, ...extra }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    })
  }
  return passInteractions(browser, page)
}
