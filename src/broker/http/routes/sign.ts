import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { BrokerError } from '../../../errors.js'
import type { BrokerDeps } from '../../deps.js'
import { checkHash } from '../../flows/hash-check.js'
import type { Reply } from '../../flows/reply.js'
import { startFlow } from '../../flows/run.js'

const signBody = {
  type: 'object',
  properties: {
    hash: { type: 'string', maxLength: 256 },
    url: { type: 'string' },
    method: { type: 'string' },
    body: {},
    parameters: {},
    content_type: { type: 'string' },
  },
} as const

/**
 * The signing helper's inputs as the runner takes them: flat strings. A JSON `parameters` object
 * travels as JSON text; a JSON `body` object is a JSON payload, so its fields are not signed.
 */
function signParams(request: FastifyRequest): Record<string, string> {
  const out: Record<string, string> = {}
  for (const source of [request.body, request.query]) {
    if (!source || typeof source !== 'object') continue
    for (const [k, v] of Object.entries(source as Record<string, unknown>)) {
      if (out[k] !== undefined || v === undefined || v === null) continue
      out[k] = typeof v === 'object' ? JSON.stringify(v) : String(v)
    }
  }
  return out
}

function send(reply: FastifyReply, out: Reply): FastifyReply {
  reply.code(out.status).headers(out.headers ?? {})
  if (out.html !== undefined) return reply.type('text/html; charset=utf-8').send(out.html)
  return reply.send(out.json ?? (out.status === 302 ? undefined : {}))
}

/** POST /sign: the OAuth 1.0a signing helper under a clearer name than /start; reusable flows only. */
export async function signRoutes(app: FastifyInstance, { deps }: { deps: BrokerDeps }): Promise<void> {
  app.post('/sign', { schema: { body: signBody } }, async (request, reply) => {
    const params = signParams(request)
    const { plugin: name } = await checkHash(deps, params.hash)
    // Starting a one-shot flow here would spend its start URL on a request that cannot follow it.
    if (!(await deps.plugins.get(name)).reusable) {
      throw new BrokerError('VALIDATION', `The flow "${name}" is not a signing flow; POST /sign takes the hash of an oauth_1_1-legged or oauth_echo_1 record.`, {
        fields: { hash: 'is not the hash of a signing flow' },
      })
    }
    return send(reply, await startFlow(deps, { params, cookies: {} }))
  })
}
