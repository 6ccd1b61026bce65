import { STATUS_CODES } from 'node:http'
import { shorten } from './params.js'
import type { FinalAnswer } from './walker.js'

/** The answer that ended a walk, as shown: the body parsed when JSON, every code, token and secret shortened. */
export interface ShownAnswer {
  status: number
  /** The status's reason phrase (`Conflict`). */
  status_text: string
  content_type?: string
  /** A JSON body as a value; any other body as text (at most 40 lines). */
  body?: unknown
}

const MAX_LINES = 40
// JSON members whose value grants something. `code` is left out: in an answer body it is an error code.
const SECRET_KEY =
  /^(access_token|refresh_token|id_token|token|oauth_token|oauth_token_secret|access_secret|client_secret|password|oauth_verifier|result|hash|assertion|device_code)$/i
// A JWT (or JWE) anywhere: three or more base64url parts, the first a JSON header.
const JWT = /\bey[\w-]{8,}\.(?:[\w-]*\.)+[\w-]+/g
// name=value pairs of credentials in text (a query string, a form, a page).
const PAIR =
  /\b(code|access_token|refresh_token|id_token|oauth_token|oauth_token_secret|oauth_verifier|access_secret|result|hash)=([^&\s"'<>]+)/g

/** A text with JWTs and credential name=value pairs cut to their ends. */
export function shortenText(text: string): string {
  return text.replace(JWT, (jwt) => shorten(jwt)).replace(PAIR, (_m, k: string, v: string) => `${k}=${shorten(v)}`)
}

/** A JSON value with credential members (and any JWT-looking string) shortened, at any depth. */
export function shortenJson(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(shortenJson)
  if (value && typeof value === 'object')
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [
        k,
        typeof v === 'string' && SECRET_KEY.test(k) ? shorten(v) : shortenJson(v),
      ]),
    )
  return typeof value === 'string' ? shortenText(value) : value
}

/** The final answer of a chain as a walk shows it (never a credential whole). */
export function showAnswer(final: FinalAnswer): ShownAnswer {
  const shown: ShownAnswer = {
    status: final.status,
    status_text: final.statusText || STATUS_CODES[final.status] || '',
    ...(final.contentType ? { content_type: final.contentType } : {}),
  }
  if (!final.body) return shown
  if (/\bjson\b/i.test(final.contentType ?? '')) {
    try {
      return { ...shown, body: shortenJson(JSON.parse(final.body)) }
    } catch {
      // Not JSON after all: shown as text.
    }
  }
  const lines = shortenText(final.body).replace(/\s+$/, '').split(/\r?\n/)
  const body =
    lines.length > MAX_LINES
      ? [...lines.slice(0, MAX_LINES), `… (${lines.length - MAX_LINES} more lines)`].join('\n')
      : lines.join('\n')
  return { ...shown, body }
}

/** Whether the chain ended in an error answer (4xx or 5xx). */
export const isErrorStatus = (status: number): boolean => status >= 400

/** The answer as lines: `answer 409 Conflict (application/json)`, then the body, JSON pretty-printed. */
export function answerLines(answer: ShownAnswer): string[] {
  const type = answer.content_type ? ` (${answer.content_type.split(';')[0]})` : ''
  const head = `answer ${answer.status}${answer.status_text ? ` ${answer.status_text}` : ''}${type}`
  if (answer.body === undefined) return [head, '(empty body)']
  const text = typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body, null, 2)
  return [head, ...text.split('\n')]
}
