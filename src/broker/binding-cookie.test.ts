import { describe, expect, it } from 'vitest'
import { configSchema } from '../config/schema.js'
import { resolveSecrets } from '../services/serve/secrets.js'
import { bindingCookie, bindingCookieMatches, cookieKeys, legacyBindingCookie } from './binding-cookie.js'

const SESSION = 'a session secret of some length'
const OLD = 'the cookie secret of last week'
const NEW = 'the cookie secret of this week'
const keysOf = (cookie: Record<string, unknown>) =>
  cookieKeys(resolveSecrets(configSchema.parse({ session: { secret: SESSION }, cookie })).config)
const HASH = 'h'.repeat(32)
const NONCE = 'n'.repeat(32)

describe('the binding cookie', () => {
  it('is named and valued under cookie.secret: another cookie secret gives another cookie', () => {
    const [a] = keysOf({ secret: OLD })
    const [b] = keysOf({ secret: NEW })
    const ca = bindingCookie(a!, HASH, NONCE, false)
    const cb = bindingCookie(b!, HASH, NONCE, false)
    expect(ca.name).toMatch(/^broker_[A-Za-z0-9_-]{12}$/)
    expect(ca.value).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(ca.name).not.toBe(cb.name)
    expect(ca.value).not.toBe(cb.value)
    expect(bindingCookieMatches([b!], HASH, NONCE, false, { [ca.name]: ca.value })).toBe(false)
  })

  it('is keyed by session.secret without cookie.secret, and that key differs from cookie.secret set to the same text', () => {
    const [derived] = keysOf({})
    const [same] = keysOf({ secret: SESSION })
    // The same text either way: a session.secret moved into cookie.secret keeps the cookies of flows in progress.
    expect(bindingCookie(derived!, HASH, NONCE, false)).toEqual(bindingCookie(same!, HASH, NONCE, false))
    const [other] = keysOf({ secret: NEW })
    expect(bindingCookie(derived!, HASH, NONCE, false)).not.toEqual(bindingCookie(other!, HASH, NONCE, false))
  })

  it('is accepted under cookie.previousSecrets, and new cookies use cookie.secret', () => {
    const [old] = keysOf({ secret: OLD })
    const rotated = keysOf({ secret: NEW, previousSecrets: [OLD] })
    const c = bindingCookie(old!, HASH, NONCE, true)
    expect(bindingCookieMatches(rotated, HASH, NONCE, true, { [c.name]: c.value })).toBe(true)
    expect(bindingCookieMatches(keysOf({ secret: NEW }), HASH, NONCE, true, { [c.name]: c.value })).toBe(false)
    expect(bindingCookie(rotated[0]!, HASH, NONCE, true)).toEqual(
      bindingCookie(keysOf({ secret: NEW })[0]!, HASH, NONCE, true),
    )
  })

  it('binds one flow and one run: another hash or nonce, or the value under another name, matches nothing', () => {
    const keys = keysOf({ secret: NEW })
    const c = bindingCookie(keys[0]!, HASH, NONCE, false)
    expect(bindingCookieMatches(keys, HASH, NONCE, false, { [c.name]: c.value })).toBe(true)
    expect(bindingCookieMatches(keys, 'x'.repeat(32), NONCE, false, { [c.name]: c.value })).toBe(false)
    expect(bindingCookieMatches(keys, HASH, 'm'.repeat(32), false, { [c.name]: c.value })).toBe(false)
    // Over https the name is __Host-: the bare name, which a sibling subdomain could plant, binds nothing.
    expect(bindingCookieMatches(keys, HASH, NONCE, true, { [c.name]: c.value })).toBe(false)
    expect(bindingCookie(keys[0]!, HASH, NONCE, true).name).toBe(`__Host-${c.name}`)
  })

  it('is named by the run as well: another nonce gives another name, so runs of one flow keep their own cookies', () => {
    const [key] = keysOf({ secret: NEW })
    expect(bindingCookie(key!, HASH, NONCE, false).name).not.toBe(bindingCookie(key!, HASH, 'm'.repeat(32), false).name)
  })

  it('accepts the earlier form (two HMAC-SHA256) under the current and previous keys, for flows begun before an upgrade', () => {
    const rotated = keysOf({ secret: NEW, previousSecrets: [OLD] })
    for (const key of rotated) {
      const c = legacyBindingCookie(key, HASH, NONCE, true)
      expect(c.name).toMatch(/^__Host-broker_[A-Za-z0-9_-]{12}$/)
      expect(c.name).not.toBe(bindingCookie(key, HASH, NONCE, true).name)
      expect(bindingCookieMatches(rotated, HASH, NONCE, true, { [c.name]: c.value })).toBe(true)
      // Its value under the new form's name, or another run's, matches nothing.
      expect(
        bindingCookieMatches(rotated, HASH, NONCE, true, { [bindingCookie(key, HASH, NONCE, true).name]: c.value }),
      ).toBe(false)
      expect(bindingCookieMatches(rotated, HASH, 'm'.repeat(32), true, { [c.name]: c.value })).toBe(false)
    }
    expect(
      bindingCookieMatches(
        keysOf({ secret: 'a third cookie secret, unrelated' }),
        HASH,
        NONCE,
        true,
        (() => {
          const c = legacyBindingCookie(rotated[0]!, HASH, NONCE, true)
          return { [c.name]: c.value }
        })(),
      ),
    ).toBe(false)
  })
})
