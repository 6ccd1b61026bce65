import { FlowError, type FlowContext, type FlowRecord, type HttpAnswer } from '../../contract.js'
import { looksLike } from '../field-names.js'
import { formShapeProblem, shapeError } from '../provider-json.js'
import { BROKER_FIELDS } from '../token-answer.js'
import { signerOf } from './record.js'
import { signRequest } from './sign.js'

/** Credentials a provider hands out: a token, its secret, and whatever else it sent (user_id, …). */
export interface Credentials {
  token: string
  secret: string
  fields: Record<string, string>
}

/**
 * Posts a signed, empty-bodied token request (§2.1 temporary credentials, §2.3 token credentials)
 * and reads the credentials from the form-encoded answer; a refusal becomes a FlowError carrying
 * the provider's own words.
 */
export async function requestCredentials(
  ctx: FlowContext,
  endpoint: 'request token' | 'access token',
  url: string,
  options: { token?: { key: string; secret?: string }; oauth?: Record<string, string> } = {},
): Promise<Credentials> {
  const signed = signRequest(signerOf(ctx.record, options.token), { method: 'POST', url, oauth: options.oauth })
  const answer = await ctx.http(url, {
    method: 'POST',
    headers: {
      authorization: signed.header,
      'content-type': 'application/x-www-form-urlencoded',
      accept: 'application/x-www-form-urlencoded, text/plain;q=0.9',
    },
    body: '',
  })
  return credentialsFromAnswer(answer, endpoint)
}

/** Reads `oauth_token` and `oauth_token_secret` from a token endpoint's answer, or says why not. */
export function credentialsFromAnswer(answer: HttpAnswer, endpoint: string): Credentials {
  const problem = formShapeProblem(answer.body)
  if (problem) throw shapeError(`The ${endpoint} endpoint's answer`, problem)
  const fields = formFields(answer.body)
  if (answer.status < 200 || answer.status >= 300) {
    if (fields?.oauth_problem) {
      // The OAuth Problem Reporting extension: the provider's code and advice, as it sent them.
      const advice = fields.oauth_problem_advice ? `: ${fields.oauth_problem_advice}` : ''
      // The provider's code is the app's `error` alone, even one spelled like the broker's (INTERNAL).
      throw new FlowError({
        oauthError: fields.oauth_problem,
        description: `The ${endpoint} endpoint refused the request (${answer.status} ${fields.oauth_problem})${advice}`,
      })
    }
    throw new FlowError({
      description: `The ${endpoint} endpoint answered ${answer.status}${answer.body.trim() ? `: ${snippet(answer.body)}` : ''}`,
    })
  }
  if (!fields) {
    throw new FlowError({
      description: `The ${endpoint} endpoint answered ${answer.status} with a body that is not form-encoded: ${snippet(answer.body) || '(empty)'}`,
    })
  }
  const { oauth_token: token, oauth_token_secret: secret } = fields
  if (!token || secret === undefined) {
    const missing = [!token && 'oauth_token', secret === undefined && 'oauth_token_secret']
      .filter(Boolean)
      .join(' and ')
    throw new FlowError({ description: `The ${endpoint} endpoint's answer has no ${missing}` })
  }
  return { token, secret, fields }
}

/** A body that has the shape of a form, as fields; undefined for HTML, JSON, prose or nothing. */
export function formFields(body: string): Record<string, string> | undefined {
  const text = body.trim()
  // Providers send forms as text/html or text/plain too (Twitter did): judge the body, not its type.
  if (!/^[^\s=&<>{}"]+=[^\s&<>"]*(&[^\s=&<>{}"]+=[^\s&<>"]*)*$/.test(text)) return undefined
  return Object.fromEntries(new URLSearchParams(text))
}

// The provider's message as one short line: enough to act on, never a whole error page.
function snippet(body: string): string {
  return body
    .replace(/<[^>]*>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 200)
}

/** Token credentials as delivered to the app: access_token, access_secret, the provider's extra fields, the app's state. */
export function accessResult(access: Credentials, record: Readonly<FlowRecord>): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(access.fields))
    if (!PROTOCOL_FIELDS.has(k) && !BROKER_FIELDS.has(k) && !looksLike(k)) out[k] = v
  out.access_token = access.token
  out.access_secret = access.secret
  if (record.state !== undefined) out.state = record.state
  return out
}

// A provider field named like the broker's own callback parameters (error, broker_error, …) is dropped too.
const PROTOCOL_FIELDS = new Set(['oauth_token', 'oauth_token_secret', 'oauth_callback_confirmed'])
