import { bindingCookie as keyedCookie, bindingCookieMatches, cookieKeys } from '../binding-cookie.js'
import type { BrokerDeps } from '../deps.js'
import type { Reply } from './reply.js'
import type { FlowEntry } from '../store/flow-store.js'

/**
 * The cookie binding the browser to its flow (binding-cookie.ts): named and valued by HMACs under the
 * cookie key over the flow's hash and its nonce (192 random bits, kept sealed with the flow). Over
 * https its name has the `__Host-` prefix, which a browser accepts only from this very host, Secure,
 * with Path=/ and no Domain: a sibling subdomain cannot plant (toss) a cookie of that name to bind a
 * victim's browser to its own flow.
 */
export function bindingCookie(deps: BrokerDeps, entry: FlowEntry): Reply['cookie'] {
  const maxAge = Math.max(1, Math.ceil((entry.expiresAt - Date.now()) / 1000))
  const [key] = cookieKeys(deps.config)
  return { ...keyedCookie(key!, entry.hash, String(entry.data.nonce), secure(deps)), maxAge }
}

const secure = (deps: BrokerDeps) => deps.config.protocol === 'https'

/** Whether a flow has come to its end: completed or failed. */
export const ended = (entry: FlowEntry) => entry.progress === 'completed' || entry.progress === 'failed'

/** Whether the request carries the cookie binding its browser to the flow. */
export function cookieMatches(
  deps: BrokerDeps,
  entry: FlowEntry,
  cookies: Record<string, string | undefined>,
): boolean {
  const nonce = entry.data.nonce
  if (typeof nonce !== 'string') return false
  return bindingCookieMatches(cookieKeys(deps.config), entry.hash, nonce, secure(deps), cookies)
}
