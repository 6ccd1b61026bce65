import { hash } from 'node:crypto'
import { FlowError, type FlowContext, type FlowRecord, type HttpAnswer } from '../contract.js'
import { randomPool } from './random.js'

/** Fields of an OAuth 2 token answer that the broker hands to apps. */
const TOKEN_FIELDS = ['access_token', 'refresh_token', 'expires_in', 'token_type', 'scope', 'id_token'] as const

/** A PKCE verifier and its S256 challenge (RFC 7636). */
export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomPool(32).toString('base64url')
  return { verifier, challenge: hash('sha256', verifier, 'base64url') }
}

/** Whether the record wants PKCE: on unless it says `pkce: false` (also "false"/"0"/"no" from forms). */
export function wantsPkce(record: Readonly<FlowRecord>): boolean {
  const v = record.pkce
  return !(v === false || (typeof v === 'string' && /^(false|0|no|off)$/i.test(v)))
}

/** Extra authorize parameters from the record: an object, or a query string. */
export function extraParams(value: unknown): Record<string, string> {
  if (!value) return {}
  if (typeof value === 'string') return Object.fromEntries(new URLSearchParams(value))
  if (typeof value === 'object')
    return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, String(v)]))
  return {}
}

/**
 * Posts a token request to `access_url` and returns the token answer.
 *
 * Written here rather than with simple-oauth2's clients because providers answer in ways it does
 * not accept: form-encoded bodies (GitHub without an Accept header), errors with status 200, a
 * token under another name (`access_name`); and the broker needs its own timeout and error codes.
 */
export async function requestToken(ctx: FlowContext, params: Record<string, string>): Promise<Record<string, unknown>> {
  const r = ctx.record
  const clientId = String(r.client_id ?? '')
  const clientSecret = r.client_secret === undefined ? undefined : String(r.client_secret)
  const headers: Record<string, string> = {
    'content-type': 'application/x-www-form-urlencoded',
    accept: 'application/json, application/x-www-form-urlencoded;q=0.9',
  }
  const body = new URLSearchParams(params)
  if (r.client_auth === 'basic' && clientSecret !== undefined) {
    // RFC 6749 §2.3.1: form-encode both parts before base64.
    const pair = `${formEncode(clientId)}:${formEncode(clientSecret)}`
    headers.authorization = `Basic ${Buffer.from(pair).toString('base64')}`
  } else {
    body.set('client_id', clientId)
    if (clientSecret !== undefined) body.set('client_secret', clientSecret)
  }
  const answer = await ctx.http(String(r.access_url), { method: 'POST', headers, body: body.toString() })
  return tokenFromAnswer(answer, typeof r.access_name === 'string' && r.access_name ? r.access_name : 'access_token')
}

const formEncode = (s: string) => encodeURIComponent(s).replace(/%20/g, '+')

/** Parses a token answer (JSON or form), raising provider errors even when sent with status 200. */
export function tokenFromAnswer(answer: HttpAnswer, accessName = 'access_token'): Record<string, unknown> {
  const fields = parseBody(answer)
  if (fields && typeof fields.error === 'string') {
    throw new FlowError(fields.error, String(fields.error_description ?? fields.error_message ?? fields.error))
  }
  // Facebook's Graph API (and others) nest the error: {"error": {"message", "type", "code"}}.
  if (fields && fields.error && typeof fields.error === 'object' && !Array.isArray(fields.error)) {
    const e = fields.error as Record<string, unknown>
    const code = [e.type, e.code, e.status].find((v) => typeof v === 'string' && /^[\w.-]{1,64}$/.test(v)) as
      string | undefined
    const message =
      typeof e.message === 'string' && e.message
        ? e.message
        : `The token endpoint answered ${answer.status} with an error`
    throw new FlowError(code ?? 'PROVIDER_ERROR', message)
  }
  if (answer.status >= 400 || !fields) {
    const snippet = answer.body.replace(/\s+/g, ' ').slice(0, 200)
    throw new FlowError(
      'PROVIDER_ERROR',
      `The token endpoint answered ${answer.status} with ${fields ? 'no token' : `a body that is neither JSON nor form-encoded: ${snippet}`}`,
    )
  }
  const token = fields[accessName] ?? fields.access_token
  if (typeof token !== 'string' || !token) {
    throw new FlowError('PROVIDER_ERROR', `The token endpoint's answer has no "${accessName}"`)
  }
  const out: Record<string, unknown> = { ...fields, access_token: token }
  if (typeof out.expires_in === 'string' && /^\d+$/.test(out.expires_in)) out.expires_in = Number(out.expires_in)
  return out
}

function parseBody(answer: HttpAnswer): Record<string, unknown> | undefined {
  const type = (answer.headers['content-type'] ?? '').toLowerCase()
  const text = answer.body.trim()
  if (type.includes('json') || text.startsWith('{')) {
    try {
      const parsed: unknown = JSON.parse(text)
      return parsed && typeof parsed === 'object' && !Array.isArray(parsed)
        ? (parsed as Record<string, unknown>)
        : undefined
    } catch {
      return undefined
    }
  }
  if (
    type.includes('x-www-form-urlencoded') ||
    type.includes('text/plain') ||
    /^[\w.~%+-]+=[^<>\s]*(&[\w.~%+-]+=[^<>\s]*)*$/.test(text)
  ) {
    const parsed = Object.fromEntries(new URLSearchParams(text))
    return Object.keys(parsed).length ? parsed : undefined
  }
  return undefined
}

/** The token answer as delivered to the app: the usual fields, the app's own state, nothing else. */
export function deliverable(token: Record<string, unknown>, record: Readonly<FlowRecord>): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const f of TOKEN_FIELDS) if (token[f] !== undefined && token[f] !== '') out[f] = token[f]
  if (out.token_type === undefined && typeof record.authorize_method === 'string')
    out.token_type = record.authorize_method
  if (record.state !== undefined) out.state = record.state
  return out
}
