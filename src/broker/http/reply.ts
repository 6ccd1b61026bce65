import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Reply } from '../flow/reply.js'

/**
 * How a route flattens a list value: `first` takes its first value (a repeated query or form field);
 * `json` passes it whole as JSON text (POST /sign, whose `body` and `parameters` may be JSON values).
 */
export type ListValues = 'first' | 'json'

/**
 * A request's query and body parameters as one flat map of strings, the body's first: the runner
 * takes strings. A JSON object (e.g. the signing helper's `parameters`) travels as JSON text, not dropped.
 */
export function requestParams(request: FastifyRequest, lists: ListValues = 'first'): Record<string, string> {
  // Own keys only: a parameter named `constructor` or `toString` is a parameter like any other (the
  // check found Object.prototype's and dropped it). `__proto__` is never taken: app frameworks read it
  // as the object's prototype. A plain object, not Object.create(null): V8 keeps that one in
  // dictionary mode, and this runs on every /start and /callback.
  const out: Record<string, string> = {}
  for (const source of [request.body, request.query]) {
    if (!source || typeof source !== 'object') continue
    for (const [k, v] of Object.entries(source as Record<string, unknown>)) {
      const value = lists === 'first' && Array.isArray(v) ? v[0] : v
      if (k === '__proto__' || Object.hasOwn(out, k) || value === null || value === undefined) continue
      out[k] = typeof value === 'object' ? JSON.stringify(value) : String(value)
    }
  }
  return out
}

/**
 * Sends a runner's transport-neutral reply. Its cookie is set only when the route passes `cookie`
 * (the flow routes, over https or not); any other route drops it.
 */
export function send(reply: FastifyReply, out: Reply, cookie?: { secure: boolean }): FastifyReply {
  if (out.cookie && cookie) reply.header('set-cookie', bindingCookieHeader(out.cookie, cookie.secure))
  reply.code(out.status).headers(out.headers ?? {})
  if (out.html !== undefined) return reply.type('text/html; charset=utf-8').send(out.html)
  return reply.send(out.json ?? (out.status === 302 ? undefined : {}))
}

// The binding cookie's name and value are the broker's own base64url text (HMACs, binding-cookie.ts).
const TOKEN = /^[A-Za-z0-9_-]{1,64}$/

/**
 * The Set-Cookie header of a flow's binding cookie. Written here rather than with the cookie
 * library's serialize, whose checks of every part cost about 6 µs per /start (its regexes and
 * encodeURIComponent) for parts that are all the broker's own: reply.test.ts holds the two to the
 * same text. Providers may return with a cross-site POST (response_mode=form_post), with which a Lax
 * cookie would not come along. None needs Secure, so plain http keeps Lax, and /callback posts such an
 * answer once more from its own page (same-site, cookie included). The cookie binds either way: it
 * is named after one flow and carries a MAC of that flow's nonce. Over https its name has the `__Host-`
 * prefix (binding-cookie.ts), which this header satisfies: Secure, Path=/, no Domain.
 */
export function bindingCookieHeader(c: NonNullable<Reply['cookie']>, secure: boolean): string {
  if (!TOKEN.test(c.name) || !TOKEN.test(c.value) || !Number.isInteger(c.maxAge))
    throw new TypeError('a binding cookie is base64url text with a whole Max-Age')
  // A browser drops a __Host- cookie that is not Secure (it also needs Path=/ and no Domain, as here).
  if (c.name.startsWith('__Host-') && !secure) throw new TypeError('a __Host- cookie is Secure')
  return `${c.name}=${c.value}; Max-Age=${c.maxAge}; Path=/; HttpOnly${secure ? '; Secure; SameSite=None' : '; SameSite=Lax'}`
}
