import type { FastifyInstance } from 'fastify'
import { BrokerError } from '../../../errors.js'
import type { BrokerDeps } from '../../deps.js'
import { checkHash } from '../../flows/hash-check.js'
import { startFlow } from '../../flows/run.js'
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
