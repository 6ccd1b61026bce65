import type { FastifyInstance } from 'fastify'
import { describe, expect, it } from 'vitest'
import { type RouteServer, routeServers } from '../../../test/helpers/deps.js'
import type { ConfigInput } from '../../config/schema.js'
import { apiKeyGuard, bearerCheck } from './security.js'

const KEY = 'k'.repeat(20)
const OTHER = 'o'.repeat(24)
const record = { auth_version: '2', auth_leg: '2', client_id: 'c', access_url: 'http://127.0.0.1:9/token' }

const start = routeServers()
let current: RouteServer | undefined

// The embedded store's data is shared by every client in this process, and another test's flows expire
// meanwhile: count the keys that appeared since `before`, not totals.
const flowKeys = async () => new Set(await current!.broker.store.client.keys('*flow:*'))
const added = async (before: Set<string>) => [...(await flowKeys())].filter((k) => !before.has(k)).length

async function server(config: ConfigInput): Promise<FastifyInstance> {
  current = await start(config)
  return current.app
}

describe('bearerCheck (api.keys and admin.key)', () => {
  const check = bearerCheck([KEY, OTHER])

  it('takes every key, the scheme in any case, whitespace around the key', () => {
    for (const header of [`Bearer ${KEY}`, `bearer ${OTHER}`, `BEARER\t${KEY}`, `Bearer  ${KEY} \t`])
      expect(check(header), header).toBe('ok')
  })

  it('compares keys whole', () => {
    for (const header of [
      `Bearer ${KEY}x`,
      `Bearer ${KEY.slice(1)}`,
      `Bearer ${KEY.slice(0, -1)}`,
      `Bearer ${KEY} ${KEY}`,
    ])
      expect(check(header), header).toBe('wrong')
  })

  it('tells a header without a bearer key from a wrong key', () => {
    for (const header of [undefined, '', KEY, `Basic ${KEY}`, 'Bearer', 'Bearer ', 'Bearer \t ', `Bearer${KEY}`])
      expect(check(header), String(header)).toBe('missing')
  })

  it('takes a key with spaces inside it (a passphrase)', () => {
    expect(bearerCheck(['correct horse battery staple'])('Bearer correct horse battery staple')).toBe('ok')
  })
})

describe('api.keys', () => {
  it('refuses /store and /result without the bearer key (401, WWW-Authenticate) and stores nothing', async () => {
    const app = await server({ api: { keys: [KEY, OTHER] } })
    const before = await flowKeys()
    const none = await app.inject({ method: 'POST', url: '/store', payload: record })
    expect(none.statusCode).toBe(401)
    expect(none.json().code).toBe('UNAUTHORIZED')
    expect(none.headers['www-authenticate']).toBe('Bearer')
    expect(none.json().message).toBe('This route needs an API key: send Authorization: Bearer <key> (api.keys).')
    const wrong = await app.inject({
      method: 'POST',
      url: '/store',
      headers: { authorization: `Bearer ${KEY}x` },
      payload: record,
    })
    expect(wrong.json()).toMatchObject({ code: 'UNAUTHORIZED', message: 'The API key is not valid.' })
    for (const authorization of [
      `Bearer ${KEY}x`,
      `Bearer ${KEY.slice(1)}`,
      `Basic ${KEY}`,
      KEY,
      'Bearer ',
      `Bearer ${KEY} ${KEY}`,
    ]) {
      const res = await app.inject({ method: 'POST', url: '/store', headers: { authorization }, payload: record })
      expect(res.statusCode, authorization).toBe(401)
    }
    expect(await added(before)).toBe(0)
    expect((await app.inject({ method: 'POST', url: '/result', payload: { result: 'x' } })).statusCode).toBe(401)
  })

  it('lets every configured key through, to /store and /result', async () => {
    const app = await server({ api: { keys: [KEY, OTHER] } })
    for (const key of [KEY, OTHER]) {
      const res = await app.inject({
        method: 'POST',
        url: '/store',
        headers: { authorization: `Bearer ${key}` },
        payload: record,
      })
      expect(res.statusCode).toBe(200)
    }
    const res = await app.inject({
      method: 'POST',
      url: '/result',
      headers: { authorization: `bearer ${OTHER}` },
      payload: { result: 'unknown' },
    })
    expect(res.statusCode).toBe(404)
  })

  it('leaves /store open without api.keys, and /start, /hash-check open always', async () => {
    expect(apiKeyGuard(undefined)).toBeUndefined()
    const app = await server({ api: { keys: [KEY] } })
    expect((await app.inject({ url: '/hash-check?hash=nope' })).statusCode).toBe(404)
    expect((await app.inject({ url: '/start?hash=nope' })).statusCode).toBe(404)
  })
})

describe('rate limits (embedded store: in-process counters)', () => {
  it('answers 429 RATE_LIMITED with Retry-After past rate.store, and stores nothing for it', async () => {
    const app = await server({ rate: { store: 3, window: 60_000 } })
    const before = await flowKeys()
    for (let i = 0; i < 3; i++)
      expect((await app.inject({ method: 'POST', url: '/store', payload: record })).statusCode).toBe(200)
    const limited = await app.inject({ method: 'POST', url: '/store', payload: record })
    expect(limited.statusCode).toBe(429)
    expect(limited.json().code).toBe('RATE_LIMITED')
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0)
    expect(await added(before)).toBe(3)
    // Another client IP has its own budget.
    expect(
      (await app.inject({ method: 'POST', url: '/store', payload: record, remoteAddress: '10.0.0.9' })).statusCode,
    ).toBe(200)
  })

  it('counts GET and POST /start together, and leaves /hash-check unlimited', async () => {
    const app = await server({ rate: { start: 2 } })
    expect((await app.inject({ url: '/start?hash=a' })).statusCode).toBe(404)
    expect((await app.inject({ method: 'POST', url: '/start', payload: { hash: 'a' } })).statusCode).toBe(404)
    expect((await app.inject({ url: '/start?hash=a' })).statusCode).toBe(429)
    for (let i = 0; i < 5; i++) expect((await app.inject({ url: '/hash-check?hash=a' })).statusCode).toBe(404)
  })

  it('limits nothing by default', async () => {
    const app = await server({})
    for (let i = 0; i < 30; i++) expect((await app.inject({ url: '/start?hash=a' })).statusCode).toBe(404)
  })
})

describe('security headers', () => {
  it('sends no-store, nosniff, no-referrer, DENY framing and a locked-down CSP on every answer', async () => {
    const app = await server({})
    const answers = [
      await app.inject({ url: '/ping' }),
      await app.inject({ url: '/nowhere' }),
      await app.inject({ method: 'POST', url: '/store', payload: record }),
      await app.inject({ method: 'POST', url: '/store', headers: { 'content-type': 'text/plain' }, payload: 'x' }),
      await app.inject({ url: '/hash-check' }),
      await app.inject({ method: 'POST', url: '/result', payload: { result: 'not-a-code' } }),
    ]
    // A found record, and a redeemed code, carry the same headers as any other answer.
    const stored = answers[2]!.json() as { hash: string }
    answers.push(await app.inject({ url: `/hash-check?hash=${stored.hash}` }))
    expect(answers.at(-1)!.statusCode).toBe(200)
    for (const res of answers) {
      expect(res.headers['cache-control'], res.body).toBe('no-store')
      expect(res.headers['x-content-type-options']).toBe('nosniff')
      expect(res.headers['referrer-policy']).toBe('no-referrer')
      expect(res.headers['x-frame-options']).toBe('DENY')
      expect(res.headers['content-security-policy']).toContain("default-src 'none'")
      expect(res.headers['strict-transport-security']).toBeUndefined()
    }
  })

  it('adds HSTS when the public protocol is https', async () => {
    const app = await server({ protocol: 'https' })
    expect((await app.inject({ url: '/ping' })).headers['strict-transport-security']).toMatch(/max-age=\d+/)
  })
})

describe('JSON depth limit', () => {
  it('counts nesting outside strings only', async () => {
    const { jsonDepth } = await import('./security.js')
    expect(jsonDepth('{"a":"[[[{{{","b":[1,{"c":"\\"["}]}')).toBe(3)
    expect(jsonDepth('"just text"')).toBe(0)
  })

  it('refuses deep JSON with 400 VALIDATION on every route, instead of overflowing the stack later', async () => {
    const app = await server({})
    const deep = `${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}`
    for (const url of ['/store', '/sign', '/start', '/result', '/callback']) {
      const res = await app.inject({
        method: 'POST',
        url,
        headers: { 'content-type': 'application/json' },
        payload: deep,
      })
      expect(res.statusCode, url).toBe(400)
      expect(res.json().code).toBe('VALIDATION')
    }
    const ok = await app.inject({
      method: 'POST',
      url: '/store',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ ...record, authorize_params: { a: '1' } }),
    })
    expect(ok.statusCode).toBe(200)
  })
})
