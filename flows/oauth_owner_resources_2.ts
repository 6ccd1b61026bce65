import type { FlowContext, FlowPlugin, StepResult } from './contract.js'
import { checkedEndpoints } from './lib/oidc/index.js'
import { fetchProfile, wantsProfile } from './lib/profile.js'
import { tokenAnswer, tokenFlowProblems } from './lib/token-flow.js'

/**
 * OAuth 2 resource owner password credentials (RFC 6749 §4.3), with the user's profile when the
 * record asks for it. RFC 9700 forbids this grant for new work: it is here for legacy providers only.
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
    const { deliver, dpop } = await tokenAnswer(ctx, params)
    // /store checked that a profile has somewhere to come from (a userinfo_endpoint or profile_url).
    if (wantsProfile(r)) deliver.profile = await fetchProfile(ctx, deliver, await checkedEndpoints(r, ctx), dpop)
    return { deliver }
  },
}

export default plugin
