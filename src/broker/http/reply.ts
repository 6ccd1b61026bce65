import { serialize } from 'cookie'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Reply } from '../flows/reply.js'

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
  const out: Record<string, string> = {}
  for (const source of [request.body, request.query]) {
    if (!source || typeof source !== 'object') continue
    for (const [k, v] of Object.entries(source as Record<string, unknown>)) {
      const value = lists === 'first' && Array.isArray(v) ? v[0] : v
      if (out[k] !== undefined || value === null || value === undefined) continue
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
  if (out.cookie && cookie) {
    const { secure } = cookie
    // Providers may return with a cross-site POST (response_mode=form_post): a Lax cookie would not
    // come along. None needs Secure, so plain http keeps Lax, and /callback posts such an answer once more
    // from its own page (same-site, cookie included). The cookie binds either way: it is named after one
    // flow and carries that flow's nonce.
    reply.header(
      'set-cookie',
      serialize(out.cookie.name, out.cookie.value, {
        httpOnly: true,
        sameSite: secure ? 'none' : 'lax',
        secure,
        path: '/',
        maxAge: out.cookie.maxAge,
      }),
    )
  }
  reply.code(out.status).headers(out.headers ?? {})
  if (out.html !== undefined) return reply.type('text/html; charset=utf-8').send(out.html)
  return reply.send(out.json ?? (out.status === 302 ? undefined : {}))
}
