import { createServer, type Server } from 'node:http'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { memoryBroker } from '../../../../test/helpers/deps.js'
import type { StoredFlow } from '../../endpoints/store.js'
import type { Broker } from '../../index.js'
import { buildServer } from '../build.js'

let broker: Broker
let app: FastifyInstance
let provider: Server
let providerUrl = ''
/** What the fake token endpoint answers next. */
let tokenAnswer: { status: number; type: string; body: string } = {
  status: 200,
  type: 'application/json',
  body: '{"access_token":"tok"}',
}
let lastTokenRequest = ''

beforeAll(async () => {
  broker = await memoryBroker({ store: { expire: 60 } })
  app = await buildServer(broker)
  provider = createServer((req, res) => {
    let raw = ''
    req.on('data', (d) => (raw += d))
    req.on('end', () => {
      lastTokenRequest = raw
      res.writeHead(tokenAnswer.status, { 'content-type': tokenAnswer.type })
      res.end(tokenAnswer.body)
    })
  })
  await new Promise<void>((r) => provider.listen(0, '127.0.0.1', () => r()))
  const a = provider.address()
  providerUrl = `http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}`
})

afterAll(async () => {
  await app.close()
  await broker.close()
  await new Promise((r) => provider.close(r))
})

const threeLegged = (extra: Record<string, unknown> = {}) => ({
  auth_version: '2',
  auth_leg: '3',
  client_id: 'cid',
  client_secret: 'very-secret',
  authorize_url: `${providerUrl}/authorize`,
  access_url: `${providerUrl}/token`,
  callback: 'http://localhost:5999/cb',
  state: 'app-state',
  scope: 'read',
  ...extra,
})

async function store(body: Record<string, unknown>): Promise<StoredFlow> {
  const res = await app.inject({ method: 'POST', url: '/store', payload: body })
  expect(res.statusCode, res.body).toBe(200)
  return res.json()
}

describe('POST /store', () => {
  it('stores a JSON record and answers hash and url', async () => {
    const { hash, url } = await store(threeLegged())
    expect(hash).toMatch(/^[A-Za-z0-9_-]{32}$/)
    expect(url).toBe(`http://localhost:3000/start?hash=${hash}`)
  })

  it('answers the flow plugin and its whole seconds to live (store.expire), and nothing more', async () => {
    const answer = await store(threeLegged())
    expect(answer).toEqual({ hash: answer.hash, url: answer.url, plugin: 'oauth_2_3-legged', expires_in: 60 })
    const twoLegged = await store({
      auth_version: '2',
      auth_leg: '2',
      client_id: 'cid',
      access_url: `${providerUrl}/token`,
    })
    expect(twoLegged).toMatchObject({ plugin: 'oauth_2_2-legged', expires_in: 60 })
  })

  it('takes a Guardian-style form body', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/store',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams(threeLegged() as Record<string, string>).toString(),
    })
    expect(res.statusCode).toBe(200)
  })

  it('lists every missing field at once', async () => {
    const res = await app.inject({ method: 'POST', url: '/store', payload: { auth_version: '2', auth_leg: '3' } })
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({
      code: 'VALIDATION',
      fields: {
        client_id: 'is required',
        authorize_url: 'is required (or an issuer or resource to discover it from)',
        access_url: 'is required (or an issuer or resource to discover it from)',
      },
    })
  })

  it('refuses bad auth_* characters naming the field', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/store',
      payload: { auth_type: 'oauth/../x', auth_version: '2' },
    })
    expect(res.statusCode).toBe(400)
    expect(res.json().fields).toHaveProperty('auth_type')
  })

  it('answers FLOW_PLUGIN_MISSING with the plugin name and no path', async () => {
    const res = await app.inject({ method: 'POST', url: '/store', payload: { auth_version: '9', auth_leg: '9' } })
    expect(res.statusCode).toBe(404)
    expect(res.json()).toEqual({
      code: 'FLOW_PLUGIN_MISSING',
      message: 'No flow plugin named "oauth_9_9-legged".',
      plugin: 'oauth_9_9-legged',
    })
  })

  it('finds no plugin among the names every object inherits (auth_type=constructor)', async () => {
    for (const auth_type of ['constructor', 'hasownproperty', 'proto']) {
      const res = await app.inject({
        method: 'POST',
        url: '/store',
        payload: { auth_type, callback: 'http://localhost:9/cb' },
      })
      expect(res.statusCode).toBe(404)
      expect(res.json()).toMatchObject({ code: 'FLOW_PLUGIN_MISSING', plugin: auth_type })
    }
  })

  it('refuses non-loopback callbacks without callbacks.allow and says how to allow more', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/store',
      payload: threeLegged({ callback: 'https://evil.example/cb' }),
    })
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ code: 'CALLBACK_NOT_ALLOWED' })
    expect(res.json().message).toContain('callbacks.allow')
  })

  it('names every field at once when a refused callback comes with other problems', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/store',
      payload: { auth_version: '2', auth_leg: '3', access_url: 'nope', callback: 'https://app.example.com/cb' },
    })
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ code: 'VALIDATION' })
    expect(Object.keys(res.json().fields).sort()).toEqual(['access_url', 'authorize_url', 'callback', 'client_id'])
    expect(res.json().fields.callback).toMatch(/callbacks\.allow/)
  })

  it('answers 415 for other content types, 413 for big bodies, 400 for bad JSON', async () => {
    expect(
      (
        await app.inject({ method: 'POST', url: '/store', headers: { 'content-type': 'text/xml' }, payload: '<a/>' })
      ).json().code,
    ).toBe('UNSUPPORTED_MEDIA_TYPE')
    const big = await app.inject({ method: 'POST', url: '/store', payload: { client_id: 'x'.repeat(70_000) } })
    expect(big.statusCode).toBe(413)
    expect(big.json().code).toBe('BODY_TOO_LARGE')
    const bad = await app.inject({
      method: 'POST',
      url: '/store',
      headers: { 'content-type': 'application/json' },
      payload: '{"a":',
    })
    expect(bad.statusCode).toBe(400)
    expect(bad.body).not.toMatch(/node_modules|at \w+ \(/)
  })
})

describe('GET /hash-check', () => {
  it('shows the record with secrets redacted, progress and seconds left', async () => {
    const { hash } = await store(threeLegged({ password: 'pw', refresh_token: 'rt' }))
    const res = await app.inject({ url: `/hash-check?hash=${hash}` })
    expect(res.statusCode).toBe(200)
    const body = res.json()
    expect(body).toMatchObject({ hash, plugin: 'oauth_2_3-legged', progress: 'stored' })
    expect(body.expires_in).toBeGreaterThan(55)
    expect(body.record.client_id).toBe('cid')
    expect(res.body).not.toContain('very-secret')
    expect(res.body).not.toContain('"pw"')
    expect(res.body).not.toContain('"rt"')
  })

  it('reads authorize_params given as JSON text as parameters, and refuses one that is neither JSON nor a query', async () => {
    const { hash } = await store(threeLegged({ authorize_params: '{"prompt":"consent"}' }))
    const start = await app.inject({ url: `/start?hash=${hash}` })
    const loc = new URL(start.headers.location as string)
    expect(loc.searchParams.get('prompt')).toBe('consent')
    expect(loc.search).not.toContain('%7B')
    const bad = await app.inject({
      method: 'POST',
      url: '/store',
      payload: threeLegged({ authorize_params: '{"prompt"' }),
    })
    expect(bad.statusCode).toBe(400)
    expect(bad.json()).toMatchObject({
      code: 'VALIDATION',
      fields: { authorize_params: expect.stringMatching(/JSON/) },
    })
  })

  it('answers 415 to a body that is neither JSON nor a form, text/plain included', async () => {
    for (const type of ['text/plain', 'application/xml', 'text/plain; charset=utf-8']) {
      const res = await app.inject({ method: 'POST', url: '/store', headers: { 'content-type': type }, payload: 'x' })
      expect(res.statusCode, type).toBe(415)
      expect(res.json().code, type).toBe('UNSUPPORTED_MEDIA_TYPE')
    }
  })

  it('answers 404 UNKNOWN_HASH for an unknown hash', async () => {
    const res = await app.inject({ url: '/hash-check?hash=nope' })
    expect(res.statusCode).toBe(404)
    expect(res.json().code).toBe('UNKNOWN_HASH')
  })
})

describe('GET /start and /callback', () => {
  it('redirects to the provider with PKCE and the broker state, then refuses a second start', async () => {
    const { hash } = await store(threeLegged())
    const res = await app.inject({ url: `/start?hash=${hash}` })
    expect(res.statusCode).toBe(302)
    const loc = new URL(res.headers.location as string)
    expect(loc.searchParams.get('client_id')).toBe('cid')
    expect(loc.searchParams.get('redirect_uri')).toBe('http://localhost:3000/callback')
    expect(loc.searchParams.get('code_challenge_method')).toBe('S256')
    expect(loc.searchParams.get('state')).not.toBe('app-state')
    expect(String(res.headers['set-cookie'])).toMatch(/HttpOnly/)
    const again = await app.inject({ url: `/start?hash=${hash}` })
    expect(again.statusCode).toBe(409)
    expect(again.json().code).toBe('FLOW_STARTED')
  })

  it('refuses a callback from another browser (no cookie), then completes with it, then refuses a replay', async () => {
    const { hash } = await store(threeLegged())
    const start = await app.inject({ url: `/start?hash=${hash}` })
    const state = new URL(start.headers.location as string).searchParams.get('state')!
    const cookie = String(start.headers['set-cookie']).split(';')[0]!
    const cb = `/callback?code=abc&state=${encodeURIComponent(state)}`
    const csrf = await app.inject({ url: cb })
    expect(csrf.statusCode).toBe(403)
    expect(csrf.json().code).toBe('COOKIE_MISMATCH')
    tokenAnswer = {
      status: 200,
      type: 'application/json',
      body: '{"access_token":"tok","refresh_token":"ref","expires_in":3600,"token_type":"Bearer"}',
    }
    const ok = await app.inject({ url: cb, headers: { cookie } })
    expect(ok.statusCode).toBe(302)
    const delivered = new URL(ok.headers.location as string)
    expect(delivered.origin + delivered.pathname).toBe('http://localhost:5999/cb')
    expect(Object.fromEntries(delivered.searchParams)).toEqual({
      access_token: 'tok',
      refresh_token: 'ref',
      expires_in: '3600',
      token_type: 'Bearer',
      state: 'app-state',
    })
    expect(ok.headers['cache-control']).toBe('no-store')
    expect(lastTokenRequest).toContain('code_verifier=')
    expect(lastTokenRequest).toContain('grant_type=authorization_code')
    const replay = await app.inject({ url: cb, headers: { cookie } })
    expect(replay.statusCode).toBe(409)
    expect(replay.json().code).toBe('FLOW_FINISHED')
    expect((await app.inject({ url: `/hash-check?hash=${hash}` })).json().progress).toBe('completed')
  })

  it('shows a browser a page for an unknown or expired flow at /start and /callback; JSON for anyone else', async () => {
    const html = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' }
    const json = await app.inject({ url: '/start?hash=gone' })
    for (const url of ['/start?hash=gone', '/callback?code=x&state=forged.value']) {
      const res = await app.inject({ url, headers: html })
      expect(res.statusCode).toBe(url.startsWith('/start') ? 404 : 400)
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8')
      expect(res.body).toMatch(/<h1>Sign-in expired<\/h1>/)
      expect(res.body).toMatch(/sign in again/)
      expect(res.body).toMatch(/UNKNOWN_(HASH|STATE)/)
      for (const h of ['content-security-policy', 'x-content-type-options', 'cache-control', 'x-frame-options'])
        expect(res.headers[h], h).toBe(json.headers[h])
    }
    expect(json.headers['content-type']).toMatch(/^application\/json/)
    const api = await app.inject({ url: '/start?hash=gone', headers: { accept: 'application/json, text/html' } })
    expect(api.json().code).toBe('UNKNOWN_HASH')
    // Another error, or another route, is JSON whatever the Accept header says.
    expect((await app.inject({ url: '/hash-check?hash=gone', headers: html })).json().code).toBe('UNKNOWN_HASH')
    expect((await app.inject({ url: '/start', headers: html })).headers['content-type']).toMatch(/json/)
  })

  it('refuses a forged state', async () => {
    const res = await app.inject({ url: '/callback?code=x&state=forged.value' })
    expect(res.statusCode).toBe(400)
    expect(res.json().code).toBe('UNKNOWN_STATE')
  })

  it('sends provider errors at the token endpoint to the app callback', async () => {
    tokenAnswer = {
      status: 200,
      type: 'application/x-www-form-urlencoded',
      body: 'error=bad_verification_code&error_description=expired',
    }
    const { hash } = await store(threeLegged())
    const start = await app.inject({ url: `/start?hash=${hash}` })
    const state = new URL(start.headers.location as string).searchParams.get('state')!
    const cookie = String(start.headers['set-cookie']).split(';')[0]!
    const res = await app.inject({ url: `/callback?code=abc&state=${encodeURIComponent(state)}`, headers: { cookie } })
    expect(res.statusCode).toBe(302)
    const loc = new URL(res.headers.location as string)
    expect(loc.searchParams.get('error')).toBe('bad_verification_code')
    expect(loc.searchParams.get('error_description')).toBe('expired')
    expect(loc.searchParams.get('state')).toBe('app-state')
    expect((await app.inject({ url: `/hash-check?hash=${hash}` })).json().progress).toBe('failed')
  })

  it('delivers JSON without a callback, and by one-time code with delivery code', async () => {
    tokenAnswer = { status: 200, type: 'application/json', body: '{"access_token":"cc-tok","token_type":"Bearer"}' }
    const { hash } = await store({
      auth_version: '2',
      auth_leg: '2',
      client_id: 'c',
      client_secret: 's',
      access_url: `${providerUrl}/token`,
    })
    const res = await app.inject({ url: `/start?hash=${hash}` })
    expect(res.statusCode).toBe(200)
    expect(res.json()).toEqual({ access_token: 'cc-tok', token_type: 'Bearer' })

    const coded = await store({
      auth_version: '2',
      auth_leg: '2',
      client_id: 'c',
      access_url: `${providerUrl}/token`,
      callback: 'http://127.0.0.1:1/cb',
      delivery: 'code',
    })
    const redirect = await app.inject({ url: `/start?hash=${coded.hash}` })
    const loc = new URL(redirect.headers.location as string)
    expect(loc.searchParams.get('access_token')).toBeNull()
    const code = loc.searchParams.get('result')!
    const first = await app.inject({ method: 'POST', url: '/result', payload: { result: code } })
    expect(first.json()).toEqual({ access_token: 'cc-tok', token_type: 'Bearer' })
    const second = await app.inject({ method: 'POST', url: '/result', payload: { result: code } })
    expect(second.statusCode).toBe(404)
    expect(second.json().code).toBe('UNKNOWN_RESULT')
  })

  it('posts the result with an auto-submitting form for delivery form_post', async () => {
    tokenAnswer = { status: 200, type: 'application/json', body: '{"access_token":"fp-tok"}' }
    const { hash } = await store({
      auth_version: '2',
      auth_leg: '2',
      client_id: 'c',
      access_url: `${providerUrl}/token`,
      callback: 'http://127.0.0.1:1/cb',
      delivery: 'form_post',
      state: '"><script>',
    })
    const res = await app.inject({ url: `/start?hash=${hash}` })
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toMatch(/text\/html/)
    expect(res.body).toContain('action="http://127.0.0.1:1/cb"')
    expect(res.body).toContain('name="access_token" value="fp-tok"')
    expect(res.body).not.toContain('"><script>')
    expect(res.headers['content-security-policy']).toContain('form-action http://127.0.0.1:1')
  })

  it('ends a flow whose provider answers HTML with a clear JSON error', async () => {
    tokenAnswer = { status: 502, type: 'text/html', body: '<html>Bad gateway</html>' }
    const { hash } = await store({
      auth_version: '2',
      auth_leg: '2',
      client_id: 'c',
      access_url: `${providerUrl}/token`,
    })
    const res = await app.inject({ url: `/start?hash=${hash}` })
    expect(res.statusCode).toBe(502)
    expect(res.json()).toMatchObject({ code: 'PROVIDER_ERROR' })
  })
})

describe('the browser-binding cookie', () => {
  it('is SameSite=Lax over http, and SameSite=None; Secure over https so a provider POSTing back (form_post) still carries it', async () => {
    const { hash } = await store(threeLegged())
    const plain = String((await app.inject({ url: `/start?hash=${hash}` })).headers['set-cookie'])
    expect(plain).toMatch(/SameSite=Lax/)
    expect(plain).not.toMatch(/Secure/)

    const httpsBroker = await memoryBroker({ protocol: 'https', host: 'broker.example.com' })
    const httpsApp = await buildServer(httpsBroker)
    try {
      const res = await httpsApp.inject({ method: 'POST', url: '/store', payload: threeLegged() })
      const start = await httpsApp.inject({ url: `/start?hash=${res.json().hash}` })
      expect(start.statusCode).toBe(302)
      const cookie = String(start.headers['set-cookie'])
      expect(cookie).toMatch(/SameSite=None/)
      expect(cookie).toMatch(/Secure/)
      expect(cookie).toMatch(/HttpOnly/)
    } finally {
      await httpsApp.close()
      await httpsBroker.close()
    }
  })
})

describe('the binding cookie name', () => {
  const cookieOf = (res: { headers: Record<string, unknown> }) => String(res.headers['set-cookie']).split(';')[0]!
  const stateOf = (res: { headers: Record<string, unknown> }) =>
    new URL(res.headers.location as string).searchParams.get('state')!

  it('is random per flow: two flows in one browser keep two cookies', async () => {
    const [a, b] = [await store(threeLegged()), await store(threeLegged())]
    const [ca, cb] = [
      cookieOf(await app.inject({ url: `/start?hash=${a.hash}` })),
      cookieOf(await app.inject({ url: `/start?hash=${b.hash}` })),
    ]
    const [na, nb] = [ca.split('=')[0]!, cb.split('=')[0]!]
    expect(na).toMatch(/^broker_[A-Za-z0-9_-]{12}$/)
    expect(na).not.toBe(nb)
  })

  it('binds by the nonce alone: the same value with anything after it is refused', async () => {
    const { hash } = await store(threeLegged())
    const start = await app.inject({ url: `/start?hash=${hash}` })
    const cb = `/callback?code=abc&state=${encodeURIComponent(stateOf(start))}`
    const refused = await app.inject({ url: cb, headers: { cookie: `${cookieOf(start)}.anything` } })
    expect(refused.json().code).toBe('COOKIE_MISMATCH')
    tokenAnswer = { status: 200, type: 'application/json', body: '{"access_token":"tok"}' }
    expect((await app.inject({ url: cb, headers: { cookie: cookieOf(start) } })).statusCode).toBe(302)
  })

  it('is __Host- over https (Secure, Path=/, no Domain): a cookie of the bare name, which a sibling subdomain could plant, binds nothing', async () => {
    const httpsBroker = await memoryBroker({ protocol: 'https', host: 'broker.example.com' })
    const httpsApp = await buildServer(httpsBroker)
    try {
      const stored = await httpsApp.inject({ method: 'POST', url: '/store', payload: threeLegged() })
      const start = await httpsApp.inject({ url: `/start?hash=${stored.json().hash}` })
      const header = String(start.headers['set-cookie'])
      expect(header).toMatch(
        /^__Host-broker_[A-Za-z0-9_-]{12}=[A-Za-z0-9_-]+; Max-Age=\d+; Path=\/; HttpOnly; Secure; SameSite=None$/,
      )
      const cookie = cookieOf(start)
      const cb = `/callback?code=abc&state=${encodeURIComponent(stateOf(start))}`
      // Cookie tossing: the same name and nonce without the prefix, as a sibling subdomain may set for .example.com.
      const tossed = await httpsApp.inject({ url: cb, headers: { cookie: cookie.replace(/^__Host-/, '') } })
      expect(tossed.json().code).toBe('COOKIE_MISMATCH')
      tokenAnswer = { status: 200, type: 'application/json', body: '{"access_token":"tok"}' }
      const ok = await httpsApp.inject({ url: cb, headers: { cookie } })
      expect(ok.statusCode).toBe(302)
      expect(new URL(ok.headers.location as string).searchParams.get('access_token')).toBe('tok')
    } finally {
      await httpsApp.close()
      await httpsBroker.close()
    }
  })
})

describe('misc', () => {
  it('answers /ping and JSON 404s', async () => {
    expect((await app.inject({ url: '/ping' })).json()).toEqual({ ping: 'pong' })
    const nf = await app.inject({ url: '/nope' })
    expect(nf.statusCode).toBe(404)
    expect(nf.json().code).toBe('NOT_FOUND')
  })
})
