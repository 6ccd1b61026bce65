import { createHmac, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto'
import { createServer, type Server } from 'node:http'
import { SignJWT } from 'jose'

/** What the hand-made provider's token endpoint received. */
export interface TokenRequest {
  contentType: string
  authorization?: string
  body: Record<string, unknown>
}

/** How the next id_token is made: claims to change (undefined drops one), or another key, kid or alg to sign with. */
export interface IdTokenPlan {
  claims?: Record<string, unknown>
  key?: KeyObject
  kid?: string
  /** The header's alg (default by the key: RS256 for RSA, ES256 for P-256). */
  alg?: string
  /** Makes the whole token from its claims instead (an unsigned or HMAC token). */
  token?: (claims: Record<string, unknown>) => string
  /** More fields in the token answer. */
  answer?: Record<string, unknown>
  /** No kid in the header (the key is found by its type alone). */
  noKid?: boolean
}

/** How the next userinfo answer is made: its claims, and whether it is a signed JWT (and with which key). */
export interface UserinfoPlan {
  claims?: Record<string, unknown>
  signed?: boolean
  key?: KeyObject
}

export interface HandMadeProvider {
  issuer: string
  /** What discovery answers besides the defaults, read at each request (a test may change it). */
  metadata: Record<string, unknown>
  /** Pushed authorization requests received at /par (RFC 9126); each answered with a request_uri. */
  parRequests: Record<string, string>[]
  authorizeRequests: Record<string, string>[]
  tokenRequests: TokenRequest[]
  /** The next id_tokens: signed with the published key (kid k1) and right claims, unless the plan says. */
  plan: IdTokenPlan
  /** The next userinfo answers: `{sub: alice, name}` as JSON, unless the plan says. */
  userinfo: UserinfoPlan
  /** Access tokens its userinfo endpoint was called with. */
  userinfoRequests: string[]
  /** Keys published at the jwks_uri, by kid. */
  published: Map<string, KeyObject>
  /** Where /authorize sends the browser: back to the redirect_uri with a code (and iss), unless replaced. */
  authorize: (query: Record<string, string>, issuer: string) => string
  stop(): Promise<void>
}

/** A fresh RSA signing key. */
export const rsaKey = (): KeyObject => generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey

/** A fresh EC P-256 signing key. */
export const ecKey = (): KeyObject => generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey

/** The JWS alg a key signs with here: RS256 (RSA) or ES256 (P-256). */
const algOf = (key: KeyObject): string => (key.asymmetricKeyType === 'ec' ? 'ES256' : 'RS256')

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url')

/** A JWT signed with `alg: none` (no signature). */
export const unsignedJwt = (claims: Record<string, unknown>): string => `${b64({ alg: 'none' })}.${b64(claims)}.`

/** A JWT signed HS256 with `secret` (a client secret, or a public key's PEM in an algorithm-confusion attack). */
export const hs256Jwt = (claims: Record<string, unknown>, secret: string | Buffer, kid?: string): string => {
  const input = `${b64({ alg: 'HS256', ...(kid ? { kid } : {}) })}.${b64(claims)}`
  return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`
}

/**
 * A small OpenID provider written for the tests: discovery, JWKS, an authorization endpoint that
 * answers at once, and a token endpoint whose id_token can be spoiled one way at a time.
 */
export async function startHandMadeProvider(
  metadata: Record<string, unknown> = {},
  opts: { iss?: boolean } = {},
): Promise<HandMadeProvider> {
  const key = rsaKey()
  const p: HandMadeProvider = {
    issuer: '',
    metadata,
    parRequests: [],
    authorizeRequests: [],
    tokenRequests: [],
    plan: {},
    userinfo: {},
    userinfoRequests: [],
    published: new Map([['k1', key]]),
    authorize: (q, issuer) => {
      const back = new URL(q.redirect_uri!)
      back.searchParams.set('code', `code-${Math.random().toString(36).slice(2)}`)
      back.searchParams.set('state', q.state!)
      if (opts.iss !== false) back.searchParams.set('iss', issuer)
      return back.toString()
    },
    stop: async () => undefined,
  }
  const server: Server = createServer((req, res) => {
    let raw = ''
    req.on('data', (d) => (raw += d))
    req.on('end', () => {
      void (async () => {
        const url = new URL(req.url ?? '/', p.issuer)
        const json = (status: number, body: unknown) => {
          res.writeHead(status, { 'content-type': 'application/json' })
          res.end(JSON.stringify(body))
        }
        if (url.pathname === '/.well-known/openid-configuration') {
          return json(200, {
            issuer: p.issuer,
            authorization_endpoint: `${p.issuer}/authorize`,
            token_endpoint: `${p.issuer}/token`,
            jwks_uri: `${p.issuer}/jwks`,
            userinfo_endpoint: `${p.issuer}/userinfo`,
            authorization_response_iss_parameter_supported: true,
            ...p.metadata,
          })
        }
        if (url.pathname === '/par' && req.method === 'POST') {
          p.parRequests.push(Object.fromEntries(new URLSearchParams(raw)))
          return json(201, { request_uri: `urn:hm:${p.parRequests.length}`, expires_in: 60 })
        }
        if (url.pathname === '/jwks') {
          // Only the public halves.
          const keys = [...p.published].map(([kid, k]) => ({
            ...createPublicKey(k).export({ format: 'jwk' }),
            kid,
            alg: algOf(k),
            use: 'sig',
          }))
          return json(200, { keys })
        }
        if (url.pathname === '/userinfo') {
          p.userinfoRequests.push(req.headers.authorization ?? '')
          const claims = { sub: 'alice', name: 'Alice', ...p.userinfo.claims }
          if (!p.userinfo.signed) return json(200, claims)
          const jwt = await new SignJWT(claims)
            .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
            .sign(p.userinfo.key ?? key)
          res.writeHead(200, { 'content-type': 'application/jwt' })
          return res.end(jwt)
        }
        if (url.pathname === '/authorize') {
          const query = Object.fromEntries(url.searchParams)
          p.authorizeRequests.push(query)
          res.writeHead(302, { location: p.authorize(query, p.issuer) })
          return res.end()
        }
        if (url.pathname === '/token' && req.method === 'POST') {
          const contentType = req.headers['content-type'] ?? ''
          const body = contentType.includes('json')
            ? (JSON.parse(raw) as Record<string, unknown>)
            : Object.fromEntries(new URLSearchParams(raw))
          p.tokenRequests.push({ contentType, authorization: req.headers.authorization, body })
          // A refreshed id_token carries no nonce (OpenID Connect Core §12.2).
          const nonce = body.grant_type === 'refresh_token' ? undefined : p.authorizeRequests.at(-1)?.nonce
          const now = Math.floor(Date.now() / 1000)
          const claims = {
            iss: p.issuer,
            sub: 'alice',
            aud: String(body.client_id ?? 'hm-client'),
            iat: now,
            exp: now + 300,
          }
          const all = { ...claims, ...(nonce ? { nonce } : {}), ...p.plan.claims }
          const signer = p.plan.key ?? key
          const idToken = p.plan.token
            ? p.plan.token(JSON.parse(JSON.stringify(all)) as Record<string, unknown>)
            : await new SignJWT(all)
                .setProtectedHeader({
                  alg: p.plan.alg ?? algOf(signer),
                  ...(p.plan.noKid ? {} : { kid: p.plan.kid ?? 'k1' }),
                })
                .sign(signer)
          return json(200, {
            access_token: 'hm-access',
            token_type: 'Bearer',
            expires_in: 60,
            id_token: idToken,
            ...p.plan.answer,
          })
        }
        json(404, { error: 'not_found' })
      })()
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
  const address = server.address()
  p.issuer = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`
  p.stop = () =>
    new Promise((r) => {
      server.closeAllConnections()
      server.close(() => r())
    })
  return p
}
