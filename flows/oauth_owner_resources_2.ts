import type { FlowContext, FlowPlugin, StepResult } from './contract.js'
import { deliverable, requestToken } from './lib/oauth2.js'

/**
 * OAuth 2 resource owner password credentials (RFC 6749 §4.3). RFC 9700 forbids this grant for
 * new work: it is here for legacy providers only.
 */
const plugin: FlowPlugin = {
  description: 'OAuth 2 resource owner password (legacy; RFC 9700 forbids it for new work)',
  required: ['client_id', 'access_url', 'username', 'password'],

  async start(ctx: FlowContext): Promise<StepResult> {
    const r = ctx.record
    const params: Record<string, string> = {
      grant_type: 'password',
      username: String(r.username),
      password: String(r.password),
    }
    if (r.scope) params.scope = String(r.scope)
    const token = await requestToken(ctx, params)
    return { deliver: deliverable(token, r) }
  },
}

export default plugin
