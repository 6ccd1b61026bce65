import { FlowError, type FlowContext, type FlowPlugin, type StepResult } from './contract.js'
import { extraParams } from './lib/oauth2.js'
import { accessResult, normalizeOAuth1, requestCredentials, validateOAuth1 } from './lib/oauth1/index.js'

/** OAuth 1.0a with the user's consent (RFC 5849 §2): request token, authorize, access token. */
const plugin: FlowPlugin = {
  description: 'OAuth 1.0a 3-legged: request token, user authorization, access token',
  required: ['consumer_key', 'request_url', 'authorize_url', 'access_url'],
  normalize: normalizeOAuth1,
  validate: validateOAuth1,

  async start(ctx: FlowContext): Promise<StepResult> {
    const r = ctx.record
    const temp = await requestCredentials(ctx, 'request token', String(r.request_url), {
      oauth: { oauth_callback: ctx.callbackUrl },
    })
    // 1.0a's answer to session fixation (RFC 5849 §2.1); a provider without it is OAuth 1.0.
    if (temp.fields.oauth_callback_confirmed !== 'true') {
      throw new FlowError({
        description:
          'The request token endpoint did not confirm the callback (no oauth_callback_confirmed=true); the provider does not speak OAuth 1.0a',
      })
    }
    const url = new URL(String(r.authorize_url))
    for (const [k, v] of Object.entries(extraParams(r.authorize_params))) url.searchParams.set(k, v)
    url.searchParams.set('oauth_token', temp.token)
    return {
      redirect: url.toString(),
      await: temp.token,
      save: { request_token: temp.token, request_token_secret: temp.secret },
    }
  },

  async callback(ctx: FlowContext): Promise<StepResult> {
    const { oauth_token: token, oauth_verifier: verifier } = ctx.params
    if (!token && ctx.params.denied)
      throw new FlowError({
        oauthError: 'access_denied',
        description: 'The user declined the authorization at the provider',
      })
    if (token !== ctx.data.request_token)
      throw new FlowError({
        oauthError: 'invalid_request',
        description: 'The callback carries another oauth_token than the one this flow was given',
      })
    if (!verifier)
      throw new FlowError({
        oauthError: 'access_denied',
        description: 'The provider sent no oauth_verifier to the callback: the user did not authorize the request',
      })
    const access = await requestCredentials(ctx, 'access token', String(ctx.record.access_url), {
      token: { key: String(token), secret: String(ctx.data.request_token_secret ?? '') },
      oauth: { oauth_verifier: verifier },
    })
    return { deliver: accessResult(access, ctx.record) }
  },
}

export default plugin
