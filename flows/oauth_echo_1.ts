import type { FlowContext, FlowPlugin, StepResult } from './contract.js'
import { answersDirectly, normalizeOAuth1, signerOf, signRequest, validateOAuth1 } from './lib/oauth1/index.js'

/**
 * OAuth Echo (delegated verification, as Twitter used it): the app hands a third party these two
 * values, and the third party calls `verify_url` with the header to learn who the user is.
 * Reusable, since each delegated call wants a fresh nonce.
 */
const plugin: FlowPlugin = {
  description: 'OAuth Echo: X-Auth-Service-Provider and X-Verify-Credentials-Authorization for verify_url',
  required: ['consumer_key', 'oauth_token', 'verify_url'],
  reusable: true,
  normalize: normalizeOAuth1,
  validate: validateOAuth1,

  start(ctx: FlowContext): StepResult {
    const provider = String(ctx.record.verify_url)
    const { header } = signRequest(signerOf(ctx.record), { method: 'GET', url: provider })
    const result = { x_auth_service_provider: provider, x_verify_credentials_authorization: header }
    if (answersDirectly(ctx.record)) {
      return {
        respond: {
          status: 200,
          headers: { 'x-auth-service-provider': provider, 'x-verify-credentials-authorization': header },
          body: result,
        },
      }
    }
    return { deliver: result }
  },
}

export default plugin
