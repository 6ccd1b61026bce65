import { createHmac, createVerify, type KeyObject, randomBytes, timingSafeEqual } from 'node:crypto'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'

/**
 * A test-only OAuth 1.0a provider (RFC 5849). Its signature check is written here from the RFC,
 * without the oauth-1.0a package the broker signs with, so the two can disagree, and it refuses
 * every request whose signature, nonce, timestamp, consumer or token is wrong.
 */

/** How a consumer's request token endpoint misbehaves, for the refusal tests. */
export type Quirk = 'refuse' | 'html' | 'unconfirmed' | 'deny'

export interface Consumer {
  key: string
  secret?: string
  /** RSA-SHA1 consumers register a public key instead of a secret. */
  publicKey?: KeyObject
  quirk?: Quirk
}

export interface Verified {
  path: string
  method: string
  ok: boolean
  reason?: string
  signatureMethod?: string
  /** The request's parameters other than oauth_* (query and form body), as verified. */
  params: [string, string][]
}

export interface OAuth1Provider {
  url: string
  requestUrl: string
  authorizeUrl: string
  accessUrl: string
  resourceUrl: string
  verifyUrl: string
  addConsumer(consumer: Consumer): void
  /** Access tokens issued so far, by token. */
  accessTokens: Map<string, { secret: string; consumer: string; user: string }>
  /** Every signed request, verified or refused, in order. */
  log: Verified[]
  stop(): Promise<void>
}

interface RequestToken {
  secret: string
  consumer: string
  callback: string
  verifier?: string
}

type Pair = [string, string]

/** RFC 3986 unreserved characters stay; every other byte becomes %XX, uppercase (§3.6). */
export function rfc3986(value: string): string {
  let out = ''
  for (const byte of Buffer.from(value, 'utf8')) {
    const c = String.fromCharCode(byte)
    out += /[A-Za-z0-9\-._~]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`
  }
  return out
}

/** application/x-www-form-urlencoded decoding, as §3.4.1.3.1 asks of query and body. */
function formDecode(text: string): Pair[] {
  if (!text) return []
  return text
    .split('&')
    .filter(Boolean)
    .map((part) => {
      const i = part.indexOf('=')
      const [k, v] = i === -1 ? [part, ''] : [part.slice(0, i), part.slice(i + 1)]
      return [decodeURIComponent(k.replace(/\+/g, ' ')), decodeURIComponent(v.replace(/\+/g, ' '))]
    })
}

/** The Authorization header's protocol parameters (§3.5.1), realm dropped. */
function headerParams(header: string | undefined): Pair[] | undefined {
  if (!header || !/^OAuth\s/i.test(header)) return undefined
  const out: Pair[] = []
  for (const m of header.slice(6).matchAll(/([A-Za-z0-9_.~%-]+)\s*=\s*"([^"]*)"/g)) {
    const name = decodeURIComponent(m[1]!)
    if (name !== 'realm') out.push([name, decodeURIComponent(m[2]!)])
  }
  return out
}

/** The signature base string of §3.4.1, from the request as it arrived. */
export function baseString(method: string, host: string, path: string, pairs: Pair[]): string {
  const [hostname, port] = host.toLowerCase().split(':')
  const authority = port && port !== '80' ? `${hostname}:${port}` : hostname
  const normalized = pairs
    .filter(([k]) => k !== 'oauth_signature')
    .map(([k, v]) => [rfc3986(k), rfc3986(v)] as const)
    .sort(([ak, av], [bk, bv]) => (ak < bk ? -1 : ak > bk ? 1 : av < bv ? -1 : av > bv ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join('&')
  return [method.toUpperCase(), rfc3986(`http://${authority}${path}`), rfc3986(normalized)].join('&')
}

const sameText = (a: string, b: string) => {
  const [x, y] = [Buffer.from(a), Buffer.from(b)]
  return x.length === y.length && timingSafeEqual(x, y)
}

export async function startOAuth1Provider(): Promise<OAuth1Provider> {
  const consumers = new Map<string, Consumer>()
  const requestTokens = new Map<string, RequestToken>()
  const accessTokens = new Map<string, { secret: string; consumer: string; user: string }>()
  const nonces = new Set<string>()
  const log: Verified[] = []

  const refuse = (res: ServerResponse, problem: string, advice: string) => {
    res.writeHead(401, {
      'content-type': 'application/x-www-form-urlencoded',
      'www-authenticate': 'OAuth realm="test-provider"',
    })
    res.end(`oauth_problem=${rfc3986(problem)}&oauth_problem_advice=${rfc3986(advice)}`)
  }

  /** Checks a request's signature; the token it names must be of `kind` (none for request tokens). */
  const verify = (req: IncomingMessage, body: string, kind: 'none' | 'request' | 'access') => {
    const url = new URL(req.url ?? '/', 'http://x')
    const path = url.pathname
    const fail = (reason: string) => {
      log.push({ path, method: req.method ?? '', ok: false, reason, params: [] })
      return { ok: false as const, reason }
    }
    const oauth = headerParams(req.headers.authorization)
    if (!oauth) return fail('no OAuth Authorization header')
    const get = (name: string) => oauth.find(([k]) => k === name)?.[1]
    const isForm =
      (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase() === 'application/x-www-form-urlencoded'
    const query = formDecode(url.search.slice(1))
    const form = isForm ? formDecode(body) : []
    const consumer = consumers.get(get('oauth_consumer_key') ?? '')
    if (!consumer) return fail('unknown consumer')
    const method = get('oauth_signature_method') ?? ''
    const signature = get('oauth_signature')
    if (!signature) return fail('no signature')
    const timestamp = Number(get('oauth_timestamp'))
    // RFC 5849 lets PLAINTEXT omit these; the broker always sends them, so all methods are held to it.
    if (!Number.isInteger(timestamp) || Math.abs(timestamp - Date.now() / 1000) > 300) return fail('stale timestamp')
    const nonce = `${consumer.key}:${timestamp}:${get('oauth_nonce') ?? ''}`
    if (!get('oauth_nonce') || nonces.has(nonce)) return fail('nonce missing or used')
    nonces.add(nonce)
    const tokenKey = get('oauth_token')
    let tokenSecret = ''
    let user: string | undefined
    if (kind === 'request') {
      const t = tokenKey ? requestTokens.get(tokenKey) : undefined
      if (!t || t.consumer !== consumer.key) return fail('unknown request token')
      tokenSecret = t.secret
    } else if (kind === 'access') {
      const t = tokenKey ? accessTokens.get(tokenKey) : undefined
      if (!t || t.consumer !== consumer.key) return fail('unknown access token')
      tokenSecret = t.secret
      user = t.user
    }
    const base = baseString(req.method ?? 'GET', req.headers.host ?? '', path, [...oauth, ...query, ...form])
    const key = `${rfc3986(consumer.secret ?? '')}&${rfc3986(tokenSecret)}`
    let good: boolean
    switch (method) {
      case 'HMAC-SHA1':
      case 'HMAC-SHA256':
        good =
          consumer.secret !== undefined &&
          sameText(
            signature,
            createHmac(method === 'HMAC-SHA1' ? 'sha1' : 'sha256', key)
              .update(base)
              .digest('base64'),
          )
        break
      case 'PLAINTEXT':
        good = consumer.secret !== undefined && sameText(signature, key)
        break
      case 'RSA-SHA1':
        good =
          !!consumer.publicKey && createVerify('RSA-SHA1').update(base).verify(consumer.publicKey, signature, 'base64')
        break
      default:
        return fail(`unsupported signature method ${method}`)
    }
    if (!good) return fail('signature_invalid')
    const params = [...query, ...form]
    log.push({ path, method: req.method ?? '', ok: true, signatureMethod: method, params })
    return { ok: true as const, consumer, get, tokenKey, user, params }
  }

  const server: Server = createServer((req, res) => {
    let body = ''
    req.on('data', (d) => (body += d))
    req.on('end', () => {
      try {
        handle(req, res, body)
      } catch (err) {
        res.writeHead(400, { 'content-type': 'text/plain' })
        res.end(`bad request: ${(err as Error).message}`)
      }
    })
  })

  const handle = (req: IncomingMessage, res: ServerResponse, body: string): unknown => {
    const url = new URL(req.url ?? '/', 'http://x')
    const form = (res: ServerResponse, fields: Record<string, string>) => {
      // Twitter sent its token answers as text/html; the broker must judge the body, not the type.
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
      res.end(new URLSearchParams(fields).toString())
    }
    if (url.pathname === '/oauth/request_token' && req.method === 'POST') {
      const v = verify(req, body, 'none')
      if (!v.ok)
        return refuse(
          res,
          v.reason === 'signature_invalid' ? 'signature_invalid' : 'parameter_rejected',
          `Request token refused: ${v.reason}`,
        )
      const callback = v.get('oauth_callback')
      if (!callback) return refuse(res, 'parameter_absent', 'oauth_callback is required')
      if (v.consumer.quirk === 'refuse') {
        res.writeHead(401, { 'content-type': 'text/plain' })
        return res.end('Consumer suspended for abuse')
      }
      if (v.consumer.quirk === 'html') {
        res.writeHead(200, { 'content-type': 'text/html' })
        return res.end('<html><body><h1>Service Unavailable</h1><p>Try later</p></body></html>')
      }
      const token = randomBytes(8).toString('hex')
      const secret = randomBytes(12).toString('hex')
      requestTokens.set(token, { secret, consumer: v.consumer.key, callback })
      return form(res, {
        oauth_token: token,
        oauth_token_secret: secret,
        ...(v.consumer.quirk === 'unconfirmed' ? {} : { oauth_callback_confirmed: 'true' }),
      })
    }
    if (url.pathname === '/oauth/authorize' && req.method === 'GET') {
      const token = url.searchParams.get('oauth_token') ?? ''
      const t = requestTokens.get(token)
      if (!t || t.callback === 'oob') {
        res.writeHead(400, { 'content-type': 'text/plain' })
        return res.end('unknown request token')
      }
      const back = new URL(t.callback)
      if (consumers.get(t.consumer)?.quirk === 'deny') {
        // The user pressed "Cancel": Twitter came back with the request token as `denied` only.
        back.searchParams.set('denied', token)
      } else {
        t.verifier = randomBytes(6).toString('hex')
        back.searchParams.set('oauth_token', token)
        back.searchParams.set('oauth_verifier', t.verifier)
      }
      res.writeHead(302, { location: back.toString() })
      return res.end()
    }
    if (url.pathname === '/oauth/access_token' && req.method === 'POST') {
      const v = verify(req, body, 'request')
      if (!v.ok)
        return refuse(
          res,
          v.reason === 'signature_invalid' ? 'signature_invalid' : 'token_rejected',
          `Access token refused: ${v.reason}`,
        )
      const t = requestTokens.get(v.tokenKey!)!
      // A request token with a callback needs the user's verifier; an `oob` one is pre-authorized (2-legged).
      if (t.callback !== 'oob' && (!t.verifier || v.get('oauth_verifier') !== t.verifier))
        return refuse(res, 'verifier_invalid', 'The oauth_verifier is wrong')
      requestTokens.delete(v.tokenKey!)
      const token = `at-${randomBytes(8).toString('hex')}`
      const secret = randomBytes(12).toString('hex')
      accessTokens.set(token, { secret, consumer: v.consumer.key, user: 'alice' })
      return form(res, { oauth_token: token, oauth_token_secret: secret, user_id: '42', screen_name: 'alice' })
    }
    if (url.pathname === '/api/resource' || url.pathname === '/account/verify_credentials.json') {
      const v = verify(req, body, 'access')
      if (!v.ok) return refuse(res, 'signature_invalid', `Resource refused: ${v.reason}`)
      res.writeHead(200, { 'content-type': 'application/json' })
      return res.end(
        JSON.stringify({ user: v.user, screen_name: v.user, id: 42, method: req.method, params: v.params }),
      )
    }
    res.writeHead(404, { 'content-type': 'text/plain' })
    res.end('not found')
  }
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
  const address = server.address()
  const port = typeof address === 'object' && address ? address.port : 0
  const base = `http://127.0.0.1:${port}`
  return {
    url: base,
    requestUrl: `${base}/oauth/request_token`,
    authorizeUrl: `${base}/oauth/authorize`,
    accessUrl: `${base}/oauth/access_token`,
    resourceUrl: `${base}/api/resource`,
    verifyUrl: `${base}/account/verify_credentials.json`,
    addConsumer: (c) => void consumers.set(c.key, c),
    accessTokens,
    log,
    stop: () => new Promise((r) => server.close(() => r())),
  }
}
