import { FlowError, type FlowContext } from '../contract.js'
import { endpointRequest } from './client-auth.js'
import { type DpopKey, sendWithDpop } from './dpop/index.js'
import { readProviderJson } from './provider-json.js'

/** The longest request_uri taken (RFC 9126's are short URNs). */
const MAX_REQUEST_URI = 2048

/**
 * Pushes an authorization request (RFC 9126) with the flow's client authentication and returns
 * the `request_uri` the browser carries to the authorization endpoint instead of the parameters.
 */
export async function pushAuthorizationRequest(
  ctx: FlowContext,
  parUrl: string,
  params: Readonly<Record<string, string>>,
  options: { audience: string; supported?: readonly string[]; dpop?: DpopKey },
): Promise<string> {
  const build = () => endpointRequest(ctx.record, params, options)
  const answer = await sendWithDpop(ctx, parUrl, build, options.dpop)
  const parsed = readProviderJson(answer.body, "The pushed authorization request endpoint's answer")
  const body =
    parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined
  if (body && typeof body.error === 'string') {
    const description = typeof body.error_description === 'string' ? body.error_description : body.error
    // The provider's code is the app's `error` alone, even one spelled like the broker's (STORE_UNAVAILABLE).
    throw new FlowError({
      oauthError: body.error,
      description: `The pushed authorization request was refused: ${description}`,
    })
  }
  if ((answer.status !== 201 && answer.status !== 200) || typeof body?.request_uri !== 'string' || !body.request_uri) {
    throw new FlowError({
      description: `The pushed authorization request endpoint answered ${answer.status} without a request_uri`,
    })
  }
  // The browser carries it in the authorization URL (/start's Location): a megabyte of it reaches nobody.
  if (body.request_uri.length > MAX_REQUEST_URI)
    throw new FlowError({
      description: `The pushed authorization request endpoint answered a request_uri of ${body.request_uri.length} characters (at most ${MAX_REQUEST_URI})`,
    })
  return body.request_uri
}
