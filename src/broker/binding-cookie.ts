import { type KeyObject, createHmac, createSecretKey, hkdfSync } from 'node:crypto'
import type { ResolvedConfig } from './deps.js'
import { safeEqual } from './ids.js'

/**
 * The cookie that binds a browser to its flow, set at /start and checked at /callback. Its key comes
 * from cookie.secret (Guardian's option), or from session.secret when that is unset; cookies keyed by
 * cookie.previousSecrets are still accepted, so changing the secret refuses no flow in progress.
 *
 * name  = "broker_" ‖ HMAC(key, NAME_LABEL ‖ hash), 72 bits: one cookie per flow, several side by side,
 *         and nothing of the hash shown
 * value = HMAC(key, VALUE_LABEL ‖ hash ‖ 0 ‖ nonce), 256 bits: the nonce is random per run and kept
 *         sealed with the flow, so the value is neither guessable with the key alone nor without it
 */

const NAME_LABEL = 'broker cookie name\0'
const VALUE_LABEL = 'broker cookie value\0'
const NAME_CHARS = 12

// One key per secret text, made once: the labels keep these MACs apart from the state → hash one,
// and HKDF keeps the key apart from session.secret's other uses when cookies are keyed by it.
const keys = new Map<string, KeyObject>()
function cookieKey(secret: string): KeyObject {
  let key = keys.get(secret)
  if (!key) {
    key = createSecretKey(Buffer.from(hkdfSync('sha256', secret, '', 'broker binding cookie', 32)))
    keys.set(secret, key)
  }
  return key
}

/** The keys a cookie may be checked with, the one new cookies get first. */
export function cookieKeys(config: ResolvedConfig): readonly KeyObject[] {
  let list = keysOf.get(config)
  if (!list) {
    const current = config.cookie.secret ?? config.session.secret
    list = [current, ...(config.cookie.previousSecrets ?? [])].map(cookieKey)
    keysOf.set(config, list)
  }
  return list
}

// A broker's config is made once and not changed (resolved and frozen): its keys' list is made once too.
const keysOf = new WeakMap<ResolvedConfig, readonly KeyObject[]>()

const mac = (key: KeyObject, ...parts: string[]) => {
  const h = createHmac('sha256', key)
  for (const p of parts) h.update(p)
  return h.digest('base64url')
}

/** The binding cookie of a flow's run, keyed by `key`; `secure` gives the `__Host-` name a browser keeps to this host. */
export function bindingCookie(
  key: KeyObject,
  hash: string,
  nonce: string,
  secure: boolean,
): { name: string; value: string } {
  const name = `broker_${mac(key, NAME_LABEL, hash).slice(0, NAME_CHARS)}`
  return { name: secure ? `__Host-${name}` : name, value: mac(key, VALUE_LABEL, hash, '\0', nonce) }
}

/** Whether the request carries the flow's binding cookie under any of `keys`. */
export function bindingCookieMatches(
  keys: readonly KeyObject[],
  hash: string,
  nonce: string,
  secure: boolean,
  cookies: Record<string, string | undefined>,
): boolean {
  return keys.some((key) => {
    const expected = bindingCookie(key, hash, nonce, secure)
    const got = cookies[expected.name]
    return got !== undefined && safeEqual(got, expected.value)
  })
}
