import type { FlowContext, FlowPlugin, StepResult } from './contract.js'
import { accessResult, normalizeOAuth1, requestCredentials, validateOAuth1 } from './lib/oauth1/index.js'

/**
 * OAuth 1.0a without a user step: a request token, traded at once for an access token. For
 * providers that pre-authorize a consumer's request tokens; `oob` since no browser comes back.
 */
const plugin: FlowPlugin = {
  description: 'OAuth 1.0a 2-legged: request token, then access token, no user step',
  required: ['consumer_key', 'request_url', 'access_url'],
  normalize: normalizeOAuth1,
  validate: validateOAuth1,

  async start(ctx: FlowContext): Promise<StepResult> {
    const temp = await requestCredentials(ctx, 'request token', String(ctx.record.request_url), {
      oauth: { oauth_callback: 'oob' },
    })
    const access = await requestCredentials(ctx, 'access token', String(ctx.record.access_url), {
      token: { key: temp.token, secret: temp.secret },
    })
    return { deliver: accessResult(access, ctx.record) }
  },
}

export default plugin
