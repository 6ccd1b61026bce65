import { FlowError, type FlowContext, type FlowPlugin, type StepResult } from './contract.js'
import { deliverable, extraParams, pkcePair, requestToken, wantsPkce } from './lib/oauth2.js'
import { setQuery } from './lib/urls.js'

/** OAuth 2 authorization code grant (RFC 6749 §4.1), with PKCE S256 unless the record says `pkce: false`. */
const plugin: FlowPlugin = {
  description: 'OAuth 2 authorization code (3-legged), PKCE S256',
  required: ['client_id', 'authorize_url', 'access_url'],
  startAtStore: true,

  start(ctx: FlowContext): StepResult {
    const r = ctx.record
    // What is the same for every flow of this app, then what is this flow's own.
    const fixed: Record<string, string> = {
      ...extraParams(r.authorize_params),
      client_id: String(r.client_id),
      redirect_uri: ctx.callbackUrl,
      response_type: 'code',
    }
    if (r.scope) fixed.scope = String(r.scope)
    const own: Record<string, string> = { state: ctx.state }
    const save: Record<string, unknown> = {}
    if (wantsPkce(r)) {
      const { verifier, challenge } = pkcePair()
      own.code_challenge = challenge
      own.code_challenge_method = 'S256'
      save.code_verifier = verifier
    }
    return { redirect: setQuery(String(r.authorize_url), fixed, own), await: ctx.state, save }
  },

  async callback(ctx: FlowContext): Promise<StepResult> {
    const { code } = ctx.params
    if (!code) throw new FlowError('invalid_request', 'The provider sent no authorization code to the callback')
    const params: Record<string, string> = {
      grant_type: 'authorization_code',
      code,
      redirect_uri: ctx.callbackUrl,
    }
    if (typeof ctx.data.code_verifier === 'string') params.code_verifier = ctx.data.code_verifier
    const token = await requestToken(ctx, params)
    return { deliver: deliverable(token, ctx.record) }
  },
}

export default plugin
