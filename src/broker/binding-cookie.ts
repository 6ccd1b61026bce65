import { type KeyObject, createHmac, createSecretKey, hkdfSync } from 'node:crypto'
import type { ResolvedConfig } from './deps.js'
import { safeEqual } from './ids.js'

/**
 * The cookie that binds a browser to its flow, set at /start and checked at /callback. Its key comes
 * from cookie.secret (Guardian's option), or from session.secret when that is unset; cookies keyed by
 * cookie.previousSecrets are still accepted, so changing the secret refuses no flow in progress.
 *
 * One HMAC-SHA512 under the cookie key over LABEL ‖ hash ‖ 0 ‖ nonce gives both:
 *   name  = "broker_" ‖ its bytes 0–8 (72 bits): one cookie per run of a flow, several side by side, and
 *           nothing of the hash shown
 *   value = its bytes 32–63 (256 bits): the nonce is random per run and kept sealed with the flow, so the
 *           value is neither guessable with the key alone nor without it
 * Disjoint parts of one PRF output are as independent as two MACs: one crypto object instead of two at
 * /start and at /callback (each costs about as much as the rest of its step's crypto, bench/instructions.ts).
 * Until 0.3.0, a cookie of the earlier form (one HMAC-SHA256 for the name over the hash, another for
 * the value) is still accepted, so a browser that was at its provider's login while the broker was
 * upgraded finishes its flow.
 */

const LABEL = 'broker binding cookie\0'
const NAME_BYTES = 9
const VALUE_AT = 32
// The earlier form's labels and name length (accepted until 0.3.0).
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

/** The binding cookie of a flow's run, keyed by `key`; `secure` gives the `__Host-` name a browser keeps to this host. */
export function bindingCookie(
  key: KeyObject,
  hash: string,
  nonce: string,
  secure: boolean,
): { name: string; value: string } {
  const block = createHmac('sha512', key).update(LABEL).update(hash).update('\0').update(nonce).digest()
  const name = `broker_${block.toString('base64url', 0, NAME_BYTES)}`
  return { name: secure ? `__Host-${name}` : name, value: block.toString('base64url', VALUE_AT) }
}

const mac = (key: KeyObject, ...parts: string[]) => {
  const h = createHmac('sha256', key)
  for (const p of parts) h.update(p)
  return h.digest('base64url')
}

/** The cookie of the earlier form (two HMAC-SHA256), still accepted until 0.3.0. */
export function legacyBindingCookie(
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
  const carries = (expected: { name: string; value: string }) => {
    const got = cookies[expected.name]
    return got !== undefined && safeEqual(got, expected.value)
  }
  return (
    keys.some((key) => carries(bindingCookie(key, hash, nonce, secure))) ||
    keys.some((key) => carries(legacyBindingCookie(key, hash, nonce, secure)))
  )
}
