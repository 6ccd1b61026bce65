import { FlowError, type FlowRecord, type HttpAnswer } from '../contract.js'
import { BROKER_SPOKEN, looksLike } from './field-names.js'
import { formShapeProblem, readProviderJson, shapeError } from './provider-json.js'

/**
 * The standard fields of a token answer (RFC 6749 §5.1, OpenID Connect Core §3.1.3.3). They come from
 * the token answer only: an authorization-response parameter of one of these names is dropped, so the
 * front channel can never supply a token, an id_token or a scope the token endpoint did not give.
 */
export const TOKEN_FIELDS = ['access_token', 'refresh_token', 'expires_in', 'token_type', 'scope', 'id_token'] as const

/**
 * Names the broker itself speaks at the app's callback: its failure parameters, the app's own
 * `state`, the one-time `result` code and the OpenID verdict. A provider field of one of these names
 * is never delivered, so it cannot pass for a broker failure, another state or a verified identity
 * (nor is `__proto__`, which would set the result's prototype instead of a field).
 */
export const BROKER_FIELDS: ReadonlySet<string> = new Set(['__proto__', ...BROKER_SPOKEN])

/** Authorization-response parameters that are the protocol's, not the provider's news (RFC 6749 §4.1.2, RFC 9207). */
const PROTOCOL_PARAMS: ReadonlySet<string> = new Set(['code', 'state', 'iss', ...TOKEN_FIELDS])

const CODE = /^[\w.:-]{1,64}$/
const MAX_MESSAGE = 1000

/** Parses a token answer (JSON or form), raising provider errors in every shape providers send, even with status 200. */
export function tokenFromAnswer(answer: HttpAnswer, accessName = 'access_token'): Record<string, unknown> {
  if (answer.status >= 300 && answer.status < 400) {
    const to = redirectTarget(answer.headers.location)
    throw new FlowError({
      description: `The token endpoint redirected (HTTP ${answer.status}${to ? ` to ${to}` : ''}) instead of answering; check access_url`,
    })
  }
  const fields = parseBody(answer)
  if (fields) {
    const failure = providerError(fields, answer.status)
    if (failure) throw failure
  }
  if (answer.status >= 400 || !fields) {
    const snippet = answer.body.replace(/\s+/g, ' ').slice(0, 200)
    throw new FlowError({
      description: `The token endpoint answered ${answer.status} with ${fields ? 'no token' : `a body that is neither JSON nor form-encoded: ${snippet}`}`,
    })
  }
  const token = valueAt(fields, accessName) ?? fields.access_token
  if (typeof token !== 'string' || !token) {
    throw new FlowError({ description: `The token endpoint's answer has no "${accessName}"` })
  }
  const out: Record<string, unknown> = { ...fields, access_token: token }
  if (typeof out.expires_in === 'string' && /^\d+$/.test(out.expires_in)) out.expires_in = Number(out.expires_in)
  return out
}

/** A field by name, or by a dotted path into nested objects (`authed_user.access_token`); the whole name wins. */
export function valueAt(fields: Record<string, unknown>, path: string): unknown {
  if (Object.hasOwn(fields, path)) return fields[path]
  let at: unknown = fields
  for (const part of path.split('.')) {
    if (!at || typeof at !== 'object' || Array.isArray(at) || !Object.hasOwn(at, part)) return undefined
    at = (at as Record<string, unknown>)[part]
  }
  return at
}

/** Where a redirect points, without its query or fragment (they may carry anything). */
function redirectTarget(location: string | undefined): string | undefined {
  if (!location) return undefined
  try {
    const url = new URL(location, 'http://relative.invalid')
    return url.host === 'relative.invalid' ? url.pathname : `${url.origin}${url.pathname}`
  } catch {
    return undefined
  }
}

/**
 * The provider's own error in any of the shapes seen in the wild, as a FlowError carrying the
 * provider's code (as the app's `error`, whatever it reads like: Square's UNAUTHORIZED, even
 * STORE_UNAVAILABLE) and message, reported by the broker as PROVIDER_ERROR; undefined when the
 * answer is no error.
 *  - RFC 6749 §5.2 `{error, error_description}` (also `error_message`), and Slack's `{ok: false, error}`
 *  - Facebook's `{error: {message, type, code}}`
 *  - Notion's `{object: "error", code, message}`
 *  - `{errors: [{code|error|type, message|detail|error_description}]}` (Square, and many REST APIs)
 *  - a bare `{message}` or `{ok: false}` with an error status
 */
export function providerError(fields: Record<string, unknown>, status: number): FlowError | undefined {
  const { error } = fields
  if (typeof error === 'string' && error) {
    const said = text(fields.error_description) ?? text(fields.error_message) ?? text(fields.message)
    // Some providers put prose in `error`: then it is the message.
    return CODE.test(error) ? failure(error, said, status) : failure(undefined, said ?? error.trim(), status)
  }
  if (error && typeof error === 'object' && !Array.isArray(error)) {
    const e = error as Record<string, unknown>
    return failure(code(e.type, e.code, e.status), text(e.message) ?? text(e.error_description), status)
  }
  if (fields.object === 'error') return failure(code(fields.code), text(fields.message), status)
  const list = fields.errors
  if (Array.isArray(list) && list.length) {
    const first: unknown = list[0]
    if (typeof first === 'string') return failure(undefined, first, status)
    if (first && typeof first === 'object') {
      const e = first as Record<string, unknown>
      const message =
        text(e.message) ?? text(e.detail) ?? text(e.error_description) ?? text(e.description) ?? text(e.title)
      return failure(code(e.code, e.error, e.type, e.category), message, status)
    }
  }
  if (fields.ok === false) return failure(undefined, text(fields.message), status)
  if (status >= 400 && !fields.access_token && text(fields.message))
    return failure(code(fields.code), text(fields.message), status)
  return undefined
}

/** A FlowError with the provider's code as the app's `error` when it is a short word; else server_error, the code in the text. */
function failure(providerCode: string | undefined, message: string | undefined, status: number): FlowError {
  const word = providerCode !== undefined && CODE.test(providerCode) ? providerCode : undefined
  const what = word ?? (providerCode ? `an error (${providerCode})` : 'an error')
  const description = (message ?? `The token endpoint answered ${status} with ${what}`).slice(0, MAX_MESSAGE)
  return new FlowError({ oauthError: word, description })
}

/** The first candidate that is a usable code: a short word, else a number (kept in the message, not as the code). */
function code(...candidates: unknown[]): string | undefined {
  const word = candidates.find((c) => typeof c === 'string' && CODE.test(c)) as string | undefined
  const number = candidates.find((c) => typeof c === 'number' && Number.isFinite(c))
  return word ?? (number === undefined ? undefined : `code ${String(number)}`)
}

const text = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() ? v.trim() : undefined)

/**
 * A token answer's body as fields: a JSON object, or form-encoded text; undefined for anything else.
 * An answer nested or filled past provider-json.ts's bounds is a provider error.
 */
export function parseBody(answer: HttpAnswer): Record<string, unknown> | undefined {
  const type = (answer.headers['content-type'] ?? '').toLowerCase()
  const text = answer.body.trim()
  if (type.includes('json') || text.startsWith('{')) {
    const parsed = readProviderJson(text, "The token endpoint's answer")
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : undefined
  }
  if (
    type.includes('x-www-form-urlencoded') ||
    type.includes('text/plain') ||
    /^[\w.~%+-]+=[^<>\s]*(&[\w.~%+-]+=[^<>\s]*)*$/.test(text)
  ) {
    const problem = formShapeProblem(text)
    if (problem) throw shapeError("The token endpoint's answer", problem)
    const parsed = Object.fromEntries(new URLSearchParams(text))
    return Object.keys(parsed).length ? parsed : undefined
  }
  return undefined
}

/**
 * What the app receives: every parameter of the authorization response but the protocol's own
 * (`authorization`, e.g. QuickBooks' realmId, Apple's user), then every field of the token answer
 * (Salesforce's instance_url, Slack's authed_user …), which wins over a parameter of the same name;
 * never a name the broker speaks itself (BROKER_FIELDS) nor one an app's framework could read as such
 * (`id.token`, `state[]`: see field-names.ts); then the app's own `state`. Values stay as
 * the provider sent them: objects and arrays are turned into JSON text by the delivery, when it must.
 */
export function deliverable(
  token: Record<string, unknown>,
  record: Readonly<FlowRecord>,
  authorization: Readonly<Record<string, string>> = {},
): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const f of TOKEN_FIELDS) if (token[f] !== undefined && token[f] !== '' && token[f] !== null) out[f] = token[f]
  if (out.token_type === undefined && typeof record.authorize_method === 'string')
    out.token_type = record.authorize_method
  for (const [k, v] of Object.entries(token))
    if (v !== undefined && v !== null && !Object.hasOwn(out, k) && !BROKER_FIELDS.has(k) && !looksLike(k)) out[k] = v
  for (const [k, v] of Object.entries(authorization))
    if (v !== undefined && !Object.hasOwn(out, k) && !PROTOCOL_PARAMS.has(k) && !BROKER_FIELDS.has(k) && !looksLike(k))
      out[k] = v
  if (record.state !== undefined) out.state = record.state
  return out
}
