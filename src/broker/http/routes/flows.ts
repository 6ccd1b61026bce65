import { parse as parseCookie } from 'cookie'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { clientDocument } from '../../../../flows/lib/registration/index.js'
import { checkHash } from '../../endpoints/hash-check.js'
import { pollFlow } from '../../endpoints/poll.js'
import { redeemResult } from '../../endpoints/result.js'
import { callbackFlow } from '../../endpoints/callback.js'
import { startFlow } from '../../endpoints/start.js'
import { storeFlow } from '../../endpoints/store.js'
import type { BrokerDeps } from '../../deps.js'
import { checkedText } from '../fields.js'
import { requestParams, send } from '../reply.js'
import { apiKeyGuard, installRateLimits, sameOriginGuard } from '../security.js'

// Checked here, not by JSON schemas: a worker compiles none (fields.ts).
const hashQuery = { hash: { maxLength: 256 } }

/** The per-issuer segment of a registered client's redirect URI: 22 base64url characters (issuerRedirect). */
const callbackSegment = { issuer: { pattern: /^[A-Za-z0-9_-]{22}$/ } }

/** The broker's flow API: /store, /hash-check, /start, /callback, /result. */
export async function flowRoutes(app: FastifyInstance, { deps }: { deps: BrokerDeps }): Promise<void> {
  const cookie = { secure: deps.config.protocol === 'https' }

  const limits = await installRateLimits(app, deps)
  const guard = apiKeyGuard(deps.config.api.keys)
  const sameOrigin = sameOriginGuard(`${deps.config.protocol}://${deps.config.host}`)
  // Neither a web page of another site nor a caller without a key (when api.keys is set) stores or redeems.
  const keyed = { onRequest: guard ? [sameOrigin, guard] : [sameOrigin] }

  // storeFlow checks the body's shape itself, in the same pass as its fields, and answers only StoredFlow's.
  app.post('/store', { ...keyed, config: limits.store }, async (request) => storeFlow(deps, request.body))

  // Every answer carries cache-control: no-store (the security headers), these included.
  app.get('/hash-check', async (request) => checkHash(deps, checkedText('querystring', request.query, hashQuery).hash))

  // Only /start sets a cookie (the flow's binding) and /start and /callback read one (a start URL opened
  // again during the exchange may take its answer over): the cookie library is called there, rather than
  // the cookie plugin's two hooks running on every request.
  const start = async (request: FastifyRequest, reply: FastifyReply) => {
    const header = request.headers.cookie
    const params = requestParams(request)
    return send(reply, await startFlow(deps, { params, cookies: header ? parseCookie(header) : {} }), cookie)
  }
  // One route for both methods, so GET and POST share one rate limit counter.
  app.route({ method: ['GET', 'POST'], url: '/start', config: limits.start, handler: start })

  const callback = async (request: FastifyRequest, reply: FastifyReply) => {
    const header = request.headers.cookie
    const segment = (request.params as { issuer?: string }).issuer
    return send(
      reply,
      await callbackFlow(deps, {
        params: requestParams(request),
        cookies: header ? parseCookie(header) : {},
        crossSitePost: request.method === 'POST' && request.headers['sec-fetch-site'] === 'cross-site',
        callbackSegment:
          segment === undefined ? undefined : checkedText('params', request.params, callbackSegment).issuer,
        abandoned: () => request.raw.socket?.destroyed === true,
      }),
      cookie,
    )
  }
  app.get('/callback', callback)
  app.post('/callback', callback)
  // A client the broker registered comes back to its issuer's own redirect URI (issuerRedirect in flows/lib).
  app.get('/callback/:issuer', callback)
  app.post('/callback/:issuer', callback)

  // The broker's client metadata document per issuer segment (a client ID metadata document): an
  // authorization server that takes them fetches its client_id, this URL, to learn the client.
  const { protocol, host } = deps.config
  app.get('/clients/:issuer', async (request, reply) => {
    const segment = checkedText('params', request.params, callbackSegment).issuer!
    const { clientName, logoUri, clientUri } = deps.config.registration
    reply.header('cache-control', 'public, max-age=3600')
    return clientDocument(`${protocol}://${host}/callback`, segment, { clientName, logoUri, clientUri })
  })

  // A result code (delivery: code), or a device flow's hash to poll (RFC 8628).
  app.post('/result', keyed, async (request, reply) => {
    const p = requestParams(request)
    if (p.hash !== undefined && p.result === undefined && p.code === undefined)
      return send(reply, await pollFlow(deps, p.hash), cookie)
    return redeemResult(deps, p.result ?? p.code)
  })
}
