import { type KeyObject, createHmac, createSecretKey, hkdfSync } from 'node:crypto'
import type { ResolvedConfig } from './deps.js'
import { safeEqual } from './ids.js'

/**
 * The cookie that binds a browser to its flow, set at /start and checked at /callback. Its key comes
 * from cookie.secret (Guardian's option), or from session.secret when that is unset; cookies keyed by
 * cookie.previousSecrets are still accepted, so changing the secret refuses no flow in progress.
 *
 * One HMAC-SHA512 under that key over LABEL ‖ hash ‖ 0 ‖ nonce names and values it:
 * name  = "broker_" ‖ its first 72 bits: one cookie per flow run, several side by side, nothing of the hash shown
 * value = its next 256 bits: the nonce is random per run and kept sealed with the flow, so the value is
 *         neither guessable with the key alone nor without it
 * (One MAC, not one for the name and one for the value: each HMAC set up costs a flow about 25k instructions,
 * bench/instructions.ts, and /start and /callback each make one per key.)
 */

const LABEL = 'broker binding cookie\0'
const NAME_BYTES = 9
const VALUE_BYTES = 32

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
  const mac = createHmac('sha512', key).update(LABEL).update(hash).update('\0').update(nonce).digest()
  const name = `broker_${mac.toString('base64url', 0, NAME_BYTES)}`
  return {
    name: secure ? `__Host-${name}` : name,
    value: mac.toString('base64url', NAME_BYTES, NAME_BYTES + VALUE_BYTES),
  }
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
