import { connect } from 'node:net'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import fc from 'fast-check'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { configSchema } from '../src/config/schema.js'
import { buildServer } from '../src/broker/http/build.js'
import { type Broker, createBroker } from '../src/broker/index.js'
import { resolveSecrets } from '../src/services/serve/secrets.js'
import { type BrokerProcess, startBroker } from './helpers/broker.js'
import { type RedisServer, startRedis } from './helpers/redis.js'

// Generated hostile requests against every flow route, on a real Redis. Whatever comes in, the
// answer is a 2xx, 3xx or 4xx with a JSON error, and a refused request leaves Redis untouched
// (DEBUG DIGEST: a hash of every key and value).

let redis: RedisServer
let client: Redis
let broker: Broker
let app: FastifyInstance

const RUNS = 120

beforeAll(async () => {
  redis = await startRedis(['--enable-debug-command', 'yes'])
  client = new Redis({ port: redis.port, host: '127.0.0.1' })
  const config = configSchema.parse({ log: { level: 'silent' }, store: { port: redis.port }, body: { limit: 65_536 } })
  broker = await createBroker(resolveSecrets(config).config, 'redis')
  app = await buildServer(broker)
})

afterAll(async () => {
  await app?.close()
  await broker?.close()
  client?.disconnect()
  await redis?.stop()
})

const digest = async () => (await client.call('DEBUG', 'DIGEST')) as string

/** Strings an attacker would try: control and unicode characters, traversal, NUL, huge, glob and key syntax. */
const hostileString = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom(
    '../',
    '..\\..\\',
    '../../etc/passwd',
    'oauth/../x',
    'a\u0000b',
    '\u0000',
    '%00',
    '%2e%2e%2f',
    '*',
    '{x}',
    'broker:flow:*',
    '\r\nset-cookie: x=1',
    'http://169.254.169.254/latest/meta-data/',
    'http://[::ffff:7f00:1]:6379/',
    'http://0x7f.1/',
    'http://2130706433/',
    'http://user:pass@127.0.0.1/',
    'https://example.com/?client_secret=x',
    'http://127.0.0.1:9/a\r\nx: y',
    'a", oauth_nonce="x',
    '<script>alert(1)</script>',
    '__proto__',
    'constructor',
    '😀'.repeat(50),
    '\u202e\u200b',
    '-1',
    '1e400',
    'NaN',
  ),
  fc.string({ minLength: 5000, maxLength: 20_000 }),
)

const fieldName = fc.oneof(
  fc.constantFrom(
    'auth_type',
    'auth_flow',
    'auth_version',
    'auth_leg',
    'client_id',
    'callback',
    'delivery',
    'authorize_url',
    'access_url',
    'authorize_params',
    'request_url',
    'verify_url',
    'issuer',
    'jwks_uri',
    'par_url',
    'realm',
    'pkce',
    'hash',
    '__proto__',
    'constructor',
  ),
  hostileString.map((s) => s.slice(0, 70)),
)

const jsonValue = fc.oneof(
  hostileString,
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.jsonValue({ maxDepth: 4 }),
)

/** A valid 3-legged record, so that some generated bodies are accepted and then mangled. */
const base = {
  auth_version: '2',
  auth_leg: '3',
  client_id: 'c',
  authorize_url: 'http://127.0.0.1:9/a',
  access_url: 'http://127.0.0.1:9/t',
  callback: 'http://localhost:9/cb',
}

const record = fc
  .record({ withBase: fc.boolean(), fields: fc.dictionary(fieldName, jsonValue, { maxKeys: 8 }) })
  .map(({ withBase, fields }) => ({ ...(withBase ? base : {}), ...fields }))

const deep = fc
  .integer({ min: 100, max: 20_000 })
  .chain((n) =>
    fc.constantFrom(`${'['.repeat(n)}${']'.repeat(n)}`, `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`, '{"a":'.repeat(n)),
  )

const CONTENT_TYPES = [
  'application/json',
  'application/x-www-form-urlencoded',
  'text/plain',
  'text/xml',
  'multipart/form-data; boundary=x',
  'application/json; charset=utf-16',
  'application/octet-stream',
  'application/x-www-form-urlencoded; charset=latin1',
  '',
  'json',
  '*/*',
] as const

/** A POST body in some content type: JSON or form of a record, deep JSON, junk bytes, or too big. */
const body = fc.oneof(
  record.map((r) => ({ type: 'application/json', payload: JSON.stringify(r) })),
  record.map((r) => ({
    type: 'application/x-www-form-urlencoded',
    payload: new URLSearchParams(
      Object.entries(r).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]),
    ).toString(),
  })),
  fc.record({
    type: fc.constantFrom(...CONTENT_TYPES),
    payload: fc.oneof(
      hostileString,
      deep,
      record.map((r) => JSON.stringify(r)),
    ),
  }),
  fc.record({
    type: fc.constantFrom('application/json', 'application/x-www-form-urlencoded'),
    payload: fc.integer({ min: 65_537, max: 200_000 }).map((n) => `{"client_id":"${'x'.repeat(n)}"}`),
  }),
)

/** A raw query string: encoded hostile values, broken escapes, arrays, nested keys. */
const query = fc.oneof(
  fc.dictionary(fieldName, hostileString, { maxKeys: 5 }).map((q) => new URLSearchParams(q).toString()),
  fc.constantFrom(
    'hash',
    'hash=',
    'hash=%',
    'hash=%zz',
    'hash=%00',
    'hash[]=a&hash[]=b',
    'hash[a]=b',
    'hash=a&hash=b',
    'state=a.b.c&code=x',
    'oauth_token=x&denied=y',
    'error=x&error_description=%E2%80%AE',
    '%%%',
    '&&&==&',
    'result=x&code=y',
  ),
  hostileString.map((s) => `hash=${encodeURIComponent(s)}`),
)

/** Request headers, kept to characters an HTTP client can send. */
const headerValue = fc.string({ maxLength: 200 }).map((s) => s.replace(/[^\x20-\x7e]/g, ''))
const headers = fc.record(
  {
    cookie: fc.oneof(headerValue, fc.constant('broker_x=y.z; broker_a=%00'), fc.constant(`a=${'b'.repeat(8000)}`)),
    authorization: headerValue,
    'x-forwarded-for': headerValue,
    accept: headerValue,
    'accept-encoding': headerValue,
  },
  { requiredKeys: [] },
)

const ROUTES = [
  ['POST', '/store'],
  ['GET', '/start'],
  ['POST', '/start'],
  ['GET', '/callback'],
  ['POST', '/callback'],
  ['GET', '/hash-check'],
  ['POST', '/result'],
  ['POST', '/sign'],
] as const

function expectSane(res: LightMyRequestResponse, what: string): void {
  expect(res.statusCode, `${what} → ${res.statusCode} ${res.body.slice(0, 300)}`).toBeGreaterThanOrEqual(200)
  expect(res.statusCode, `${what} → ${res.body.slice(0, 300)}`).toBeLessThan(500)
  if (res.statusCode >= 400) {
    // Every refusal comes from the registry, with the security headers: never a raw Fastify error.
    expect(res.headers['x-content-type-options'], what).toBe('nosniff')
    expect(res.headers['cache-control'], what).toBe('no-store')
    const json = res.json() as { code?: unknown; message?: unknown }
    expect(typeof json.code, what).toBe('string')
    expect(res.body, what).not.toMatch(/node_modules|\/work\/|at \w+ \(/)
  }
}

describe('hostile input (fast-check, real Redis)', () => {
  it('answers every generated request on every flow route with 2xx/3xx/4xx, and a refusal writes nothing', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...ROUTES), query, body, headers, async ([method, path], q, b, h) => {
        const before = await digest()
        const res = await app.inject({
          method,
          url: `${path}?${q}`,
          headers: { ...h, ...(method === 'POST' && b.type ? { 'content-type': b.type } : {}) },
          ...(method === 'POST' ? { payload: b.payload } : {}),
        })
        const what = `${method} ${path}?${q.slice(0, 200)} [${b.type}] ${b.payload.slice(0, 200)}`
        expectSane(res, what)
        if (res.statusCode >= 400) expect(await digest(), `${what} wrote to Redis`).toBe(before)
      }),
      { numRuns: RUNS * ROUTES.length },
    )
  })

  it('keeps /start, /hash-check and /callback sane for a real stored flow under generated parameters', async () => {
    await fc.assert(
      fc.asyncProperty(
        query,
        headers,
        fc.constantFrom('GET /start', 'GET /hash-check', 'GET /callback', 'POST /callback'),
        async (q, h, route) => {
          const stored = await app.inject({ method: 'POST', url: '/store', payload: base })
          expect(stored.statusCode).toBe(200)
          const { hash } = stored.json() as { hash: string }
          const [method, path] = route.split(' ') as ['GET' | 'POST', string]
          let url = `${path}?${q}&hash=${hash}`
          let cookie = h.cookie
          if (path === '/callback') {
            // A real state and the right cookie, with the generated parameters around them.
            const start = await app.inject({ url: `/start?hash=${hash}` })
            const state = new URL(start.headers.location as string).searchParams.get('state')!
            cookie = String(start.headers['set-cookie']).split(';')[0]
            url = `/callback?${q}&state=${encodeURIComponent(state)}`
          }
          const before = await digest()
          const res = await app.inject({ method, url, headers: { ...h, ...(cookie ? { cookie } : {}) } })
          expectSane(res, `${route} ${url.slice(0, 300)}`)
          if (res.statusCode >= 400 && path !== '/callback') expect(await digest()).toBe(before)
        },
      ),
      { numRuns: RUNS },
    )
  })

  it('refuses bodies over body.limit with 413 and deep or broken JSON with 400', async () => {
    const big = await app.inject({
      method: 'POST',
      url: '/store',
      headers: { 'content-type': 'application/json' },
      payload: `{"a":"${'x'.repeat(70_000)}"}`,
    })
    expect(big.statusCode).toBe(413)
    expect(big.json().code).toBe('BODY_TOO_LARGE')
    const deepJson = await app.inject({
      method: 'POST',
      url: '/store',
      headers: { 'content-type': 'application/json' },
      payload: `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`,
    })
    expect(deepJson.statusCode).toBe(400)
    const traversal = await app.inject({
      method: 'POST',
      url: '/store',
      payload: { ...base, auth_type: '../../etc/passwd', auth_leg: '3\u0000' },
    })
    expect(traversal.statusCode).toBe(400)
    expect(Object.keys(traversal.json().fields)).toEqual(expect.arrayContaining(['auth_type', 'auth_leg']))
  })
})

describe('hostile bytes on the wire (a real broker process)', () => {
  let proc: BrokerProcess
  beforeAll(async () => {
    proc = await startBroker({ args: ['--store', 'redis', '--store-port', String(redis.port)] })
  })
  afterAll(async () => {
    await proc?.stop()
  })

  /** Writes raw bytes to the broker, returns the first line it answers (or '' when it just closes). */
  const raw = (bytes: Buffer | string): Promise<string> =>
    new Promise((resolve) => {
      const socket = connect(proc.port, '127.0.0.1')
      let got = ''
      socket.setTimeout(3000, () => socket.destroy())
      socket.on('data', (d) => {
        got += d.toString('latin1')
        if (got.includes('\r\n')) socket.destroy()
      })
      socket.on('error', () => {})
      socket.on('close', () => resolve(got.split('\r\n')[0] ?? ''))
      socket.end(bytes)
    })

  it('survives malformed HTTP, broken framing and junk, answering 4xx or closing, and still serves', async () => {
    const requests = fc.sample(
      fc.oneof(
        fc.uint8Array({ maxLength: 2000 }).map((a) => Buffer.from(a)),
        fc
          .tuple(
            fc.constantFrom('GET', 'POST', 'PUT', 'X', ''),
            fc.constantFrom('/store', '/start', '/callback', '/result', '/hash-check', '*', '//', '/../../etc/passwd'),
            hostileString,
          )
          .map(([m, p, s]) => `${m} ${p}?hash=${s} HTTP/1.1\r\nHost: x\r\n\r\n`),
        fc.constantFrom(
          'POST /store HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"a":1}',
          'POST /store HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n0\r\n\r\n',
          'POST /store HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n',
          `GET /start?hash=x HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
          'GET /start?hash=x HTTP/1.1\r\nHost: x\r\nCookie: \u0000\u0001\r\n\r\n',
          'GET /hash-check?hash=x HTTP/1.0\r\n\r\n',
        ),
      ),
      { numRuns: 150, seed: 7 },
    )
    for (const r of requests) {
      const line = await raw(r)
      if (line) expect(line, String(r).slice(0, 100)).toMatch(/^HTTP\/1\.[01] [234]\d\d /)
    }
    expect((await fetch(`${proc.url}/ping`)).status).toBe(200)
    expect(proc.proc.exitCode).toBeNull()
    expect(proc.stderr()).not.toMatch(/exited|unexpected error/)
  })
})
