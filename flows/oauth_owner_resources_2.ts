import type { FlowContext, FlowPlugin, StepResult } from './contract.js'
import { tokenFlowProblems, tokenStep } from './lib/token-flow.js'

/**
 * OAuth 2 resource owner password credentials (RFC 6749 §4.3). RFC 9700 forbids this grant for
 * new work: it is here for legacy providers only.
 */
const plugin: FlowPlugin = {
  description: 'OAuth 2 resource owner password (legacy; RFC 9700 forbids it for new work)',
  required: ['client_id', 'username', 'password'],

  validate: (record, io) => tokenFlowProblems(record, io),

  async start(ctx: FlowContext): Promise<StepResult> {
    const r = ctx.record
    const params: Record<string, string> = {
      grant_type: 'password',
      username: String(r.username),
      password: String(r.password),
    }
    if (r.scope) params.scope = String(r.scope)
    return tokenStep(ctx, params)
  },
}

export default plugin
