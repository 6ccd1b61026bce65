import type { FastifyInstance } from 'fastify'
import type { BrokerDeps } from '../../deps.js'
import { signWithFlow } from '../../endpoints/start.js'
import { checkedText } from '../fields.js'
import { requestParams, send } from '../reply.js'

// Checked here, not by a JSON schema: a worker compiles none (fields.ts). `body` and `parameters` may be any JSON.
const signBody = { hash: { maxLength: 256 }, url: {}, method: {}, content_type: {} }

/** POST /sign: the OAuth 1.0a signing helper under a clearer name than /start; reusable flows only. */
export async function signRoutes(app: FastifyInstance, { deps }: { deps: BrokerDeps }): Promise<void> {
  app.post('/sign', async (request, reply) => {
    checkedText('body', request.body, signBody)
    // A JSON `parameters` object travels as JSON text; a JSON `body` (object or list) is a JSON payload,
    // passed whole, so its fields are not signed.
    const params = requestParams(request, 'json')
    return send(reply, await signWithFlow(deps, { params, cookies: {} }))
  })
}
