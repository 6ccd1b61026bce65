import type { FlowContext, FlowPlugin, FlowRecord, StepResult } from './contract.js'
import { tokenFlowProblems, tokenStep } from './lib/token-flow.js'

/**
 * OAuth 2 without the user: client credentials (RFC 6749 §4.4) by default, or the record's
 * `grant_type` — `refresh_token` with its `refresh_token` field included.
 */
const plugin: FlowPlugin = {
  description: 'OAuth 2 client credentials (2-legged), or the record grant_type such as refresh_token',
  required: ['client_id'],

  async validate(record: Readonly<FlowRecord>, io) {
    const problems: Record<string, string> = {}
    if (record.grant_type === 'refresh_token' && !record.refresh_token)
      problems.refresh_token = 'is required when grant_type is refresh_token'
    if (record.grant_type === 'authorization_code')
      problems.grant_type = 'authorization_code needs the 3-legged flow (auth_leg 3)'
    return Object.keys(problems).length ? problems : tokenFlowProblems(record, io)
  },

  async start(ctx: FlowContext): Promise<StepResult> {
    const r = ctx.record
    const grant = typeof r.grant_type === 'string' && r.grant_type ? r.grant_type : 'client_credentials'
    const params: Record<string, string> = { grant_type: grant }
    if (grant === 'refresh_token') params.refresh_token = String(r.refresh_token)
    if (r.scope) params.scope = String(r.scope)
    return tokenStep(ctx, params)
  },
}

export default plugin
