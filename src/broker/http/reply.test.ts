import Fastify, { type FastifyInstance } from 'fastify'
import { afterEach, describe, expect, it } from 'vitest'
import type { Reply } from '../flow/reply.js'
import { serialize } from 'cookie'
import { type ListValues, bindingCookieHeader, requestParams, send } from './reply.js'

let app: FastifyInstance | undefined
afterEach(async () => {
  await app?.close()
  app = undefined
})

/** What requestParams makes of a request, answered as JSON. */
async function paramsOf(
  lists: ListValues | undefined,
  request: { url: string; payload?: Record<string, unknown> },
): Promise<Record<string, string>> {
  app = Fastify()
  app.post('/p', async (req) => requestParams(req, lists))
  return (await app.inject({ method: 'POST', ...request })).json()
}

describe('requestParams', () => {
  it('flattens body and query to strings, the body first, skipping null', async () => {
    const out = await paramsOf(undefined, { url: '/p?a=query&c=3', payload: { a: 'body', b: 2, t: true, n: null } })
    expect(out).toEqual({ a: 'body', b: '2', t: 'true', c: '3' })
  })

  it('passes a JSON object as JSON text', async () => {
    for (const lists of [undefined, 'json'] as const) {
      expect(await paramsOf(lists, { url: '/p', payload: { parameters: { x: 'v*1' } } })).toEqual({
        parameters: '{"x":"v*1"}',
      })
    }
  })

  it('takes parameters named after Object.prototype members like any other, and never __proto__', async () => {
    const out = await paramsOf(undefined, {
      url: '/p?constructor=c&toString=t&hasOwnProperty=h&__proto__=x&valueOf=v',
      payload: { code: 'the-code' },
    })
    expect(out).toEqual({ code: 'the-code', constructor: 'c', toString: 't', hasOwnProperty: 'h', valueOf: 'v' })
    expect(Object.keys(out)).not.toContain('__proto__')
  })

  it('takes a list\'s first value by default (a repeated query field), or its JSON text with "json" (/sign)', async () => {
    const request = { url: '/p?hash=one&hash=two', payload: { body: [{ a: 1 }, 2] } }
    expect(await paramsOf(undefined, request)).toEqual({ hash: 'one', body: '{"a":1}' })
    expect(await paramsOf('json', request)).toEqual({ hash: '["one","two"]', body: '[{"a":1},2]' })
  })
})

const withCookie: Reply = {
  status: 302,
  headers: { location: 'https://provider.example/' },
  cookie: { name: 'f', value: 'v', maxAge: 60 },
}

async function sent(out: Reply, cookie?: { secure: boolean }) {
  app = Fastify()
  app.get('/r', async (_req, reply) => send(reply, out, cookie))
  return app.inject({ url: '/r' })
}

describe('send', () => {
  it('sets the cookie only for a route that passes its cookie policy', async () => {
    const plain = await sent(withCookie, { secure: false })
    expect(plain.statusCode).toBe(302)
    expect(plain.headers.location).toBe('https://provider.example/')
    expect(plain.headers['set-cookie']).toBe('f=v; Max-Age=60; Path=/; HttpOnly; SameSite=Lax')
    expect((await sent(withCookie, { secure: true })).headers['set-cookie']).toBe(
      'f=v; Max-Age=60; Path=/; HttpOnly; Secure; SameSite=None',
    )
    expect((await sent(withCookie)).headers['set-cookie']).toBeUndefined()
  })

  it('answers HTML, JSON, {} for no body, and nothing for a bare 302', async () => {
    const html = await sent({ status: 200, html: '<p>hi</p>' })
    expect(html.headers['content-type']).toBe('text/html; charset=utf-8')
    expect(html.body).toBe('<p>hi</p>')
    expect((await sent({ status: 201, json: { ok: 1 } })).json()).toEqual({ ok: 1 })
    expect((await sent({ status: 200 })).json()).toEqual({})
    expect((await sent({ status: 302, headers: { location: '/x' } })).body).toBe('')
  })
})

describe('bindingCookieHeader', () => {
  it("is the cookie library's serialization of the same cookie", () => {
    const c = { name: 'broker_AbC-_9xyZ012', value: 'n0nce-_AbCdEfGhIjKlMnOpQrStUvWxYz012', maxAge: 597 }
    for (const secure of [false, true])
      expect(bindingCookieHeader(c, secure)).toBe(
        serialize(c.name, c.value, {
          httpOnly: true,
          sameSite: secure ? 'none' : 'lax',
          secure,
          path: '/',
          maxAge: c.maxAge,
        }),
      )
  })

  it('refuses a name or value outside base64url, or a fractional Max-Age', () => {
    for (const bad of [
      { name: 'a;b', value: 'v', maxAge: 1 },
      { name: 'a', value: 'v\r\nSet-Cookie: x=1', maxAge: 1 },
      { name: 'a', value: '', maxAge: 1 },
      { name: 'a', value: 'v', maxAge: 1.5 },
    ])
      expect(() => bindingCookieHeader(bad, false)).toThrow(TypeError)
    // A browser would drop it: a __Host- cookie must be Secure.
    expect(() => bindingCookieHeader({ name: '__Host-a', value: 'v', maxAge: 1 }, false)).toThrow(TypeError)
    expect(bindingCookieHeader({ name: '__Host-a', value: 'v', maxAge: 1 }, true)).toBe(
      '__Host-a=v; Max-Age=1; Path=/; HttpOnly; Secure; SameSite=None',
    )
  })
})
