import { createHash } from 'node:crypto'
import type { DeliveryMode } from '../../config/runtime.js'
import { looksLike } from '../../../flows/lib/field-names.js'
import { brokerError } from '../../errors/index.js'
import { newId } from '../ids.js'
import type { FlowEntry, FlowFailure } from '../store/flow-store.js'
import type { BrokerDeps } from '../deps.js'
import { type Reply, redirect, withQuery } from './reply.js'

/** Headers for anything that carries a token: never cached, never leaked through Referer. */
export const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache', 'referrer-policy': 'no-referrer' } as const

/** The delivery mode of a flow: the record's, else the first one the deployment allows. */
export function deliveryMode(entry: FlowEntry, deps: BrokerDeps): DeliveryMode {
  return (
    (entry.record.delivery as DeliveryMode | undefined) ??
    (deps.config.delivery.allow.includes('query') ? 'query' : deps.config.delivery.allow[0]!)
  )
}

const hasCallback = (entry: FlowEntry): entry is FlowEntry & { record: { callback: string } } =>
  typeof entry.record.callback === 'string' && entry.record.callback !== 'oob'

/**
 * The longest callback URL a `query` delivery makes. Browsers carry far longer ones, but the app's
 * web server or proxy commonly refuses a request line past 8 KB (nginx's and Apache's defaults): a
 * longer result (a hostile provider's 40,000 fields made a 700 kB Location header) is refused,
 * telling the app to use `form_post` or `code`, rather than sent to be cut or refused on the way.
 */
export const MAX_URL = 8192

/** A flow's result made ready for the app; for delivery `code`, the result the store must keep under `keep.code` first. */
export interface Delivery {
  reply: Reply
  mode: string
  keep?: { code: string; result: Record<string, unknown> }
}

/**
 * Makes a flow's result ready for the app, without I/O: 302 with query, an auto-posting form
 * (objects and arrays as JSON text in both), a one-time code or JSON (values as they are). Throws
 * URL_TOO_LONG when a query delivery would pass MAX_URL. Called before the flow is marked completed,
 * so that a result that cannot be delivered fails the flow instead.
 */
export function prepareDelivery(deps: BrokerDeps, entry: FlowEntry, result: Record<string, unknown>): Delivery {
  result = withoutLookAlikes(result)
  if (!hasCallback(entry)) return { reply: { status: 200, headers: { ...NO_STORE }, json: result }, mode: 'json' }
  const mode = deliveryMode(entry, deps)
  const callback = entry.record.callback
  if (mode === 'form_post')
    return {
      reply: {
        status: 200,
        headers: { ...NO_STORE, ...formHeaders(callback) },
        html: autoPostForm(callback, asText(result)),
      },
      mode,
    }
  if (mode === 'code') {
    const code = newId()
    return {
      reply: redirect(withQuery(callback, { result: code, state: entry.record.state }), { headers: { ...NO_STORE } }),
      mode,
      keep: { code, result },
    }
  }
  const location = withQuery(callback, asText(result))
  if (location.length > MAX_URL) throw brokerError('urlTooLong', { length: location.length, max: MAX_URL })
  return { reply: redirect(location, { headers: { ...NO_STORE } }), mode }
}

/**
 * The last guard before the app, whatever flow plugin made the result: a field an app's framework
 * could read as one of the broker's own (`id.token` is PHP's `id_token`) is dropped.
 */
function withoutLookAlikes(result: Record<string, unknown>): Record<string, unknown> {
  // Nearly always nothing is dropped: the result itself, not a copy made on every delivery.
  if (!Object.keys(result).some((k) => looksLike(k))) return result
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(result)) if (!looksLike(k)) out[k] = v
  return out
}

/** A result as form or query values: scalars as text, objects and arrays (Slack's `authed_user`) as JSON text. */
export function asText(result: Readonly<Record<string, unknown>>): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(result)) {
    if (v === undefined || v === null) continue
    out[k] = typeof v === 'object' ? JSON.stringify(v) : String(v)
  }
  return out
}

/**
 * Sends a flow's failure to the app's callback as `?error=<OAuth code>&error_description=&broker_error=<registry code>`,
 * or answers JSON `{code, message, error}` when there is no callback.
 */
export function deliverError(entry: FlowEntry, failure: FlowFailure, status: number): Reply {
  const { code, error, description } = failure
  if (!hasCallback(entry)) return { status, headers: { ...NO_STORE }, json: { code, message: description, error } }
  const query = { error, error_description: description, broker_error: code, state: entry.record.state }
  return redirect(withQuery(entry.record.callback, query), { headers: { ...NO_STORE } })
}

/** A page that POSTs `fields` to `target` at once, from the broker's own origin. */
export function postAgain(target: string, fields: Record<string, string>, then?: unknown): Reply {
  // same-origin, not no-referrer: with no referrer a browser sends `Origin: null` and treats the POST as cross-site.
  const page = autoPostForm(target, { ...fields, [REPOSTED]: '1' }, 'same-origin')
  // form-action also governs where the POST's answer redirects: the app's callback, when the flow has one.
  const next = typeof then === 'string' && URL.canParse(then) ? [then] : []
  return { status: 200, headers: { ...NO_STORE, ...formHeaders(target, ...next) }, html: page }
}

/** The field `postAgain` adds, so that a second cross-site arrival is refused instead of posted again. */
export const REPOSTED = 'broker_reposted'

function formHeaders(...targets: string[]): Record<string, string> {
  const origins = [...new Set(targets.map((t) => new URL(t).origin))].join(' ')
  return {
    'content-security-policy': `default-src 'none'; form-action ${origins}; script-src 'sha256-${SCRIPT_HASH}'; frame-ancestors 'none'`,
    'x-frame-options': 'DENY',
  }
}

// The prototype's submit, not the form's own property: a field named `submit` (from a token answer,
// the front channel or a cross-site POST) is the form's `submit` and would shadow the method.
const SCRIPT = 'HTMLFormElement.prototype.submit.call(document.forms[0])'
const SCRIPT_HASH = createHash('sha256').update(SCRIPT).digest('base64')

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)

/** An HTML page that POSTs the result to the callback at once (no token in any URL). */
function autoPostForm(callback: string, result: Record<string, string>, referrer = 'no-referrer'): string {
  const inputs = Object.entries(result)
    .map(([k, v]) => `<input type="hidden" name="${escapeHtml(k)}" value="${escapeHtml(v)}">`)
    .join('')
  return `<!doctype html><html><head><meta charset="utf-8"><meta name="referrer" content="${referrer}"><title>Signing you in…</title></head><body><form method="post" action="${escapeHtml(callback)}">${inputs}<noscript><button type="submit">Continue</button></noscript></form><script>${SCRIPT}</script></body></html>`
}
