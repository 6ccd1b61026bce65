import { parseCookie, stringifySetCookie } from 'cookie'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { checkHash } from '../../flows/hash-check.js'
import type { Reply } from '../../flows/reply.js'
import { redeemResult } from '../../flows/result.js'
import { callbackFlow, startFlow } from '../../flows/run.js'
import { storeFlow } from '../../flows/store.js'
import type { BrokerDeps } from '../../deps.js'
import { apiKeyGuard, installRateLimits } from '../security.js'

const hashQuery = {
  type: 'object',
  properties: { hash: { type: 'string', maxLength: 256 } },
} as const

const stored = {
  200: { type: 'object', properties: { hash: { type: 'string' }, url: { type: 'string' } }, required: ['hash', 'url'] },
} as const

/** Query and body parameters of a request as one flat map of strings (first value wins). */
function params(request: FastifyRequest): Record<string, string> {
  const out: Record<string, string> = {}
  for (const source of [request.body, request.query]) {
    if (!source || typeof source !== 'object') continue
    for (const [k, v] of Object.entries(source as Record<string, unknown>)) {
      const value = Array.isArray(v) ? v[0] : v
      if (out[k] !== undefined || value === null || value === undefined) continue
      // A JSON object (e.g. the signing helper's `parameters`) is passed on as JSON text, not dropped.
      out[k] = typeof value === 'object' ? JSON.stringify(value) : String(value)
    }
  }
  return out
}

/** Sends a service's transport-neutral reply. */
function send(reply: FastifyReply, out: Reply, secure: boolean): FastifyReply {
  if (out.cookie) {
    // Providers may return with a cross-site POST (response_mode=form_post): a Lax cookie would not
    // come along and the flow would end in COOKIE_MISMATCH. None needs Secure, so plain http keeps Lax.
    // The cookie still binds: it is named after one flow and carries that flow's signed nonce.
    reply.header('set-cookie', stringifySetCookie({ name: out.cookie.name, value: out.cookie.value, httpOnly: true, sameSite: secure ? 'none' : 'lax', secure, path: '/', maxAge: out.cookie.maxAge }))
  }
  reply.code(out.status).headers(out.headers ?? {})
  if (out.html !== undefined) return reply.type('text/html; charset=utf-8').send(out.html)
  return reply.send(out.json ?? (out.status === 302 ? undefined : {}))
}

/** The broker's flow API: /store, /hash-check, /start, /callback, /result. */
export async function flowRoutes(app: FastifyInstance, { deps }: { deps: BrokerDeps }): Promise<void> {
  const secure = deps.config.protocol === 'https'

  const limits = await installRateLimits(app, deps)
  const guard = apiKeyGuard(deps.config.api.keys)
  const keyed = guard ? { onRequest: guard } : {}

  // No body schema: storeFlow checks the body's shape itself, in the same pass as its fields.
  app.post('/store', { ...keyed, config: limits.store, schema: { response: stored } }, async (request) => storeFlow(deps, request.body))

  // Every answer carries cache-control: no-store (the security headers), these included.
  app.get('/hash-check', { schema: { querystring: hashQuery } }, async (request) => checkHash(deps, (request.query as { hash?: string }).hash))

  // Only /start sets a cookie (the flow's binding) and only /callback reads one: the cookie library
  // is called there, rather than the cookie plugin's two hooks running on every request.
  const start = async (request: FastifyRequest, reply: FastifyReply) => send(reply, await startFlow(deps, { params: params(request), cookies: {} }), secure)
  // One route for both methods, so GET and POST share one rate limit counter.
  app.route({ method: ['GET', 'POST'], url: '/start', config: limits.start, handler: start })

  const callback = async (request: FastifyRequest, reply: FastifyReply) => {
    const header = request.headers.cookie
    return send(reply, await callbackFlow(deps, { params: params(request), cookies: header ? parseCookie(header) : {} }), secure)
  }
  app.get('/callback', callback)
  app.post('/callback', callback)

  app.post('/result', keyed, async (request) => {
    const p = params(request)
    return redeemResult(deps, p.result ?? p.code)
  })
}
