import type { FlowContext, FlowPlugin, StepResult } from './contract.js'
import {
  answersDirectly,
  normalizeOAuth1,
  requestToSign,
  signerOf,
  signRequest,
  validateOAuth1,
} from './lib/oauth1/index.js'

/**
 * The signing helper: signs the caller's request (`url`, `method`, `body`, `parameters`) with the
 * stored consumer and `oauth_token`, so the app can call the provider without holding secrets.
 * Reusable: one stored record signs many requests while it lives.
 */
const plugin: FlowPlugin = {
  description: 'OAuth 1.0a 1-legged: signs resource requests, returns the Authorization header',
  required: ['consumer_key'],
  reusable: true,
  normalize: normalizeOAuth1,
  validate: validateOAuth1,

  start(ctx: FlowContext): StepResult {
    const request = requestToSign(ctx.params)
    if ('problems' in request) {
      const list = Object.entries(request.problems).map(([k, v]) => `${k} ${v}`)
      return {
        respond: {
          status: 400,
          body: {
            code: 'VALIDATION',
            message: `Invalid request to sign: ${list.join('; ')}.`,
            fields: request.problems,
          },
        },
      }
    }
    const { header } = signRequest(signerOf(ctx.record), request)
    const result = { authorization: header }
    if (answersDirectly(ctx.record))
      return { respond: { status: 200, headers: { authorization: header }, body: result } }
    return { deliver: result }
  },
}

export default plugin
