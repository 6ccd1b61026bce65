import type { FastifyInstance } from 'fastify'
import type { BrokerDeps } from '../../deps.js'
import { signWithFlow } from '../../endpoints/start.js'
import { requestParams, send } from '../reply.js'

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

/** POST /sign: the OAuth 1.0a signing helper under a clearer name than /start; reusable flows only. */
export async function signRoutes(app: FastifyInstance, { deps }: { deps: BrokerDeps }): Promise<void> {
  app.post('/sign', { schema: { body: signBody } }, async (request, reply) => {
    // A JSON `parameters` object travels as JSON text; a JSON `body` (object or list) is a JSON payload,
    // passed whole, so its fields are not signed.
    const params = requestParams(request, 'json')
    return send(reply, await signWithFlow(deps, { params, cookies: {} }))
  })
}
