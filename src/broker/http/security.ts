import { hash, timingSafeEqual } from 'node:crypto'
import type {
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  onRequestAsyncHookHandler,
  onRequestHookHandler,
} from 'fastify'
import { brokerError } from '../../errors/index.js'
import type { BrokerDeps } from '../deps.js'

/**
 * Headers on every answer. Every answer is dynamic and many carry a hash, a state or a token, so
 * none is cached; no page the broker serves may leak its URL through Referer or be framed. A page
 * that needs more (the form_post page's script) sets its own Content-Security-Policy.
 */
export function securityHeaders(protocol: 'http' | 'https'): Record<string, string> {
  return {
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'x-frame-options': 'DENY',
    'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
    'cross-origin-resource-policy': 'same-origin',
    ...(protocol === 'https' ? { 'strict-transport-security': 'max-age=31536000' } : {}),
  }
}

const digest = (s: string): Buffer => hash('sha256', s, 'buffer')

/** What a request's Authorization header says against a set of bearer keys. */
export type BearerAnswer = 'ok' | 'missing' | 'wrong'

/**
 * The one bearer key check (api.keys, admin.key): `Authorization: Bearer <key>`, scheme in any case.
 * Keys are compared as SHA-256 digests in constant time, all of them every time, so neither a key's
 * length nor which key matched shows in the timing; digests have one length, so timingSafeEqual never throws.
 */
export function bearerCheck(keys: readonly string[]): (header: string | undefined) => BearerAnswer {
  const digests = keys.map(digest)
  return (header) => {
    // Whitespace around the key is the header's, not the key's.
    const given = typeof header === 'string' ? /^Bearer[ \t]+(\S(?:.*\S)?)[ \t]*$/i.exec(header)?.[1] : undefined
    const d = digest(given ?? '')
    let ok = false
    for (const k of digests) ok = timingSafeEqual(k, d) || ok
    if (given === undefined) return 'missing'
    return ok ? 'ok' : 'wrong'
  }
}

/**
 * An onRequest hook that lets a request through only with `Authorization: Bearer <one of api.keys>`,
 * or undefined when no keys are configured.
 */
export function apiKeyGuard(keys: readonly string[] | undefined): onRequestAsyncHookHandler | undefined {
  if (!keys?.length) return undefined
  const check = bearerCheck(keys)
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const answer = check(request.headers.authorization)
    if (answer !== 'ok') {
      reply.header('www-authenticate', 'Bearer')
      throw brokerError(answer === 'wrong' ? 'apiKeyInvalid' : 'apiKeyRequired')
    }
  }
}

/**
 * An onRequest hook for the routes a web page must not drive (POST /store, POST /result): a browser
 * says where a request comes from (Sec-Fetch-Site, Origin), and a page of another site or origin is
 * refused (403 CROSS_SITE). Server-to-server callers send neither header and pass.
 */
export function sameOriginGuard(ownOrigin: string): onRequestHookHandler {
  const own = ownOrigin.toLowerCase()
  return (request, _reply, done) => {
    const site = request.headers['sec-fetch-site']
    const origin = request.headers.origin
    if (site === 'cross-site' || site === 'same-site' || (origin !== undefined && origin.toLowerCase() !== own)) {
      return done(brokerError('crossSite', { path: request.url.split('?')[0]! }))
    }
    done()
  }
}

export interface RateLimits {
  /** Route config for POST /store, or undefined when not limited. */
  store?: { rateLimit: { max: number; timeWindow: number } }
  /** Route config for GET|POST /start, or undefined when not limited. */
  start?: { rateLimit: { max: number; timeWindow: number } }
}

/**
 * Registers @fastify/rate-limit for the routes given a limit: counters per client IP in Redis, so
 * every worker and instance shares them (in-process with the embedded store). When Redis is away
 * the limit is skipped: the route itself answers 503 STORE_UNAVAILABLE.
 */
export async function installRateLimits(app: FastifyInstance, deps: BrokerDeps): Promise<RateLimits> {
  const { rate } = deps.config
  if (!rate.store && !rate.start) return {}
  // Loaded only where a limit is set: a worker without one never loads the plugin or its caches.
  const { default: rateLimit } = await import('@fastify/rate-limit')
  const client = deps.store.client
  await app.register(rateLimit, {
    global: false,
    skipOnError: true,
    // The embedded store counts in process (the plugin's own store): one process, nothing to share.
    ...(!deps.store.embedded ? { redis: client, nameSpace: deps.store.keys.rate() } : {}),
    keyGenerator: (request) => request.ip,
    errorResponseBuilder: (_request, ctx) =>
      brokerError('rateLimited', { max: ctx.max, windowMs: rate.window, after: ctx.after, ttlMs: ctx.ttl }),
  })
  const limit = (max: number) => (max ? { rateLimit: { max, timeWindow: rate.window } } : undefined)
  return { store: limit(rate.store), start: limit(rate.start) }
}

/** How deep a JSON body may nest: records are flat (authorize_params one level down). */
export const MAX_JSON_DEPTH = 32

/** The nesting depth of JSON text, counted without parsing it (brackets inside strings do not count). */
export function jsonDepth(text: string): number {
  let depth = 0
  let max = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 92 /* \ */) i++
      else if (c === 34 /* " */) inString = false
    } else if (c === 34) inString = true
    else if (c === 123 /* { */ || c === 91 /* [ */) {
      if (++depth > max) max = depth
    } else if (c === 125 /* } */ || c === 93 /* ] */) depth--
  }
  return max
}

/**
 * Replaces Fastify's JSON body parser with one that refuses deep nesting before parsing: a deep
 * body parses fine, then overflows the stack wherever it is walked (JSON.stringify, validation).
 */
export function installJsonDepthLimit(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error')
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (jsonDepth(body as string) > MAX_JSON_DEPTH) {
      return done(brokerError('jsonTooDeep', { depth: MAX_JSON_DEPTH }), undefined)
    }
    parse(request, body as string, done)
  })
}
