import { createServer, type Server, type ServerResponse } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type BrokerProcess, startBroker } from './helpers/broker.js'
import { type RedisServer, startRedis } from './helpers/redis.js'

// Issue 27, round four: what a hostile (or sloppy) authorization server can make of the broker with its
// metadata and of the registrations the broker keeps (RFC 7591). Its issuers are paths on one server
// (`/as/<variant>/<n>`): an attacker who may store flows can name as many of them as it likes, each one
// discovered, registered and kept apart.

let hostile: Server
let hostileUrl = ''
/** Every request to `/evil/…`: an endpoint a record names in place of the honest server's. */
const evil: Array<{ path: string; authorization: string; body: string }> = []

const send = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' })
  res.end(typeof body === 'string' ? body : JSON.stringify(body))
}

let bigClients = 0

/** The registration answer of each hostile variant (the issuer path's second segment). */
const REGISTER: Record<string, () => string> = {
  // Within MAX_ANSWER, kept whole: the embedded store's limit must count it.
  // Each its own client_id: one the broker keeps at another server is refused (a mix-up).
  big: () =>
    JSON.stringify({
      client_id: `big-${++bigClients}-${'c'.repeat(3_000)}`,
      client_secret: 's'.repeat(3_000),
      registration_access_token: 'r'.repeat(3_000),
    }),
  // A client_id of 900 KB: nothing that size is a client identifier.
  huge: () => JSON.stringify({ client_id: 'h'.repeat(900_000), client_secret: 'huge-secret' }),
  // JSON's 1e400 parses to Infinity; a fraction of a second; beyond any date Redis can keep.
  infinite: () => '{"client_id":"inf-client","client_secret":"inf-secret","client_secret_expires_at":1e400}',
  fraction: () =>
    '{"client_id":"frac-client","client_secret":"frac-secret","client_secret_expires_at":4102444800.0001}',
  // A method the broker holds nothing for: every flow at this issuer would fail at /start.
  'private-key-jwt': () =>
    JSON.stringify({ client_id: 'pkj-client', client_secret: 'pkj-s', token_endpoint_auth_method: 'private_key_jwt' }),
  // An honest server's confidential client: its secret must only ever go to that server.
  honest: () => JSON.stringify({ client_id: 'honest-client', client_secret: 'the-honest-secret' }),
  'far-future': () =>
    JSON.stringify({ client_id: 'far-client', client_secret: 'far-s', client_secret_expires_at: 1e17 }),
}

/** Metadata fields of each variant, over the honest ones. */
const METADATA: Record<string, Record<string, unknown>> = {
  // Servers that mean "none" write null.
  'null-jwks': { jwks_uri: null },
  'null-userinfo': { userinfo_endpoint: null },
  'null-authorize': { authorization_endpoint: null },
  'object-device': { device_authorization_endpoint: {} },
  'number-device': { device_authorization_endpoint: 1 },
  // Its pushed requests and device codes answer with URLs of a megabyte (/par, /device below).
  'long-urls': { require_pushed_authorization_requests: true },
}

/** What the `long-urls` variant answers at its PAR and device endpoints: a browser is sent to both. */
const LONG = `urn:x:${'x'.repeat(900_000)}`
const LONG_ANSWERS: Record<string, unknown> = {
  par: { request_uri: LONG, expires_in: 60 },
  device: {
    device_code: 'dc',
    user_code: 'UC',
    verification_uri: 'http://127.0.0.1:9/verify',
    verification_uri_complete: `http://127.0.0.1:9/verify?user_code=${'x'.repeat(900_000)}`,
    expires_in: 60,
  },
}

beforeAll(async () => {
  hostile = createServer((req, res) => {
    let raw = ''
    req.on('data', (d: Buffer) => (raw += d))
    req.on('end', () => {
      const path = new URL(req.url ?? '/', 'http://x').pathname
      if (path.startsWith('/evil/')) {
        evil.push({ path, authorization: req.headers.authorization ?? '', body: raw })
        return send(res, 400, { error: 'invalid_grant' })
      }
      const meta = /^\/\.well-known\/oauth-authorization-server(\/as\/[\w-]+\/\d+)$/.exec(path)
      if (meta) {
        const issuer = `${hostileUrl}${meta[1]}`
        const variant = meta[1]!.split('/')[2]!
        return send(res, 200, {
          issuer,
          authorization_endpoint: `${issuer}/authorize`,
          token_endpoint: `${issuer}/token`,
          registration_endpoint: `${issuer}/register`,
          device_authorization_endpoint: `${issuer}/device`,
          pushed_authorization_request_endpoint: `${issuer}/par`,
          code_challenge_methods_supported: ['S256'],
          token_endpoint_auth_methods_supported: ['client_secret_basic'],
          ...METADATA[variant],
        })
      }
      const long = /^\/as\/long-urls\/\d+\/(par|device)$/.exec(path)
      if (long) return send(res, long[1] === 'par' ? 201 : 200, LONG_ANSWERS[long[1]!])
      const register = /^\/as\/([\w-]+)\/\d+\/register$/.exec(path)
      if (register && req.method === 'POST') return send(res, 201, REGISTER[register[1]!]!())
      send(res, 404, { error: 'not_found' })
    })
  })
  await new Promise<void>((r) => hostile.listen(0, '127.0.0.1', () => r()))
  hostileUrl = `http://127.0.0.1:${(hostile.address() as { port: number }).port}`
})

afterAll(async () => {
  await new Promise<void>((r) => hostile.close(() => r()))
})

const store = (broker: BrokerProcess, issuer: string) =>
  fetch(`${broker.url}/store`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ auth_version: '2', auth_leg: '3', issuer, callback: 'http://localhost:9/cb' }),
  })

describe('a hostile authorization server and the registrations the broker keeps', () => {
  let broker: BrokerProcess
  beforeAll(async () => {
    // Many registrations at one host are allowed here (registration.perHost): the ledger is under test.
    broker = await startBroker({
      args: ['--store', 'memory', '--store-memory-limit', '1', '--registration-per-host', '1000'],
    })
  })
  afterAll(async () => {
    await broker.stop()
  })

  it("counts kept registrations against the embedded store's memory limit: STORE_FULL, not a worker that grows until it dies", async () => {
    // About 12 KB sealed each: 1 MB holds fewer than a hundred, with the flows.
    const statuses: number[] = []
    for (let n = 0; n < 120 && !statuses.includes(503); n++) {
      const res = await store(broker, `${hostileUrl}/as/big/${n}`)
      statuses.push(res.status)
      const body = (await res.json()) as { code?: string }
      if (res.status !== 200) expect(body.code).toBe('STORE_FULL')
    }
    expect(statuses).toContain(503)
    // Still serving, and still refusing rather than growing.
    expect((await fetch(`${broker.url}/ping`)).status).toBe(200)
  }, 60_000)
})

describe('a hostile registration answer (a real Redis)', () => {
  let broker: BrokerProcess
  let redis: RedisServer
  beforeAll(async () => {
    redis = await startRedis()
    broker = await startBroker({ args: ['--store', 'redis', '--store-port', String(redis.port)] })
  })
  afterAll(async () => {
    await broker.stop()
    await redis.stop()
  })

  it('a client_id of 900 KB is a provider error, and nothing is kept', async () => {
    const res = await store(broker, `${hostileUrl}/as/huge/1`)
    const body = (await res.json()) as { code: string; message: string }
    expect(res.status).toBe(502)
    expect(body.code).toBe('PROVIDER_ERROR')
    expect(body.message.length).toBeLessThan(1_000)
  })

  it('a token_endpoint_auth_method the broker cannot authenticate with is a provider error at /store, and nothing is kept', async () => {
    for (let i = 0; i < 2; i++) {
      const res = await store(broker, `${hostileUrl}/as/private-key-jwt/1`)
      const body = (await res.json()) as { code: string; message: string }
      expect(res.status).toBe(502)
      expect(body.code).toBe('PROVIDER_ERROR')
      expect(body.message).toContain('private_key_jwt')
    }
  })

  it.each(['infinite', 'fraction', 'far-future'])(
    'a client_secret_expires_at the store cannot keep (%s) still registers: the flow is stored, not a 503 blaming the store',
    async (variant) => {
      const res = await store(broker, `${hostileUrl}/as/${variant}/1`)
      const body = (await res.json()) as { code?: string; hash?: string }
      expect(body.code).toBeUndefined()
      expect(res.status).toBe(200)
      expect(body.hash).toBeTruthy()
      // Kept: a second flow at that issuer reuses the registration.
      expect((await store(broker, `${hostileUrl}/as/${variant}/1`)).status).toBe(200)
    },
  )
})

describe('hostile issuer metadata', () => {
  let broker: BrokerProcess
  beforeAll(async () => {
    broker = await startBroker({ args: ['--store', 'memory'] })
  })
  afterAll(async () => {
    await broker.stop()
  })

  const storeRecord = (record: Record<string, unknown>) =>
    fetch(`${broker.url}/store`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(record),
    })

  it.each([
    [
      'null-jwks',
      { auth_version: '2', auth_leg: '3', client_id: 'a', scope: 'openid', callback: 'http://localhost:9/cb' },
      200,
    ],
    ['null-userinfo', { auth_version: '2', auth_leg: '2', client_id: 'a', client_secret: 'b', profile: true }, 400],
    ['null-authorize', { auth_version: '2', auth_leg: '3', client_id: 'a', callback: 'http://localhost:9/cb' }, 400],
    ['object-device', { auth_flow: 'device', auth_version: '2', client_id: 'a' }, 400],
    ['number-device', { auth_flow: 'device', auth_version: '2', client_id: 'a' }, 400],
  ])('%s: a field of the wrong type is absent or refused by name, never a 500', async (variant, record, status) => {
    const res = await storeRecord({ ...record, issuer: `${hostileUrl}/as/${variant}/1` })
    const body = (await res.json()) as { code?: string; message?: string }
    expect(body.code).not.toBe('INTERNAL')
    expect(res.status).toBe(status)
    expect(broker.stderr()).not.toContain('unexpected error')
  })

  it('a request_uri of 900 KB from the PAR endpoint fails the flow to its callback: /start never answers a Location of megabytes', async () => {
    const res = await storeRecord({
      auth_version: '2',
      auth_leg: '3',
      issuer: `${hostileUrl}/as/long-urls/1`,
      client_id: 'a',
      client_auth: 'none',
      callback: 'http://localhost:9/cb',
    })
    const { hash } = (await res.json()) as { hash: string }
    const start = await fetch(`${broker.url}/start?hash=${hash}`, { redirect: 'manual' })
    const location = start.headers.get('location') ?? ''
    expect(start.status).toBe(302)
    expect(location.length).toBeLessThan(8192)
    const back = new URL(location)
    expect(back.origin + back.pathname).toBe('http://localhost:9/cb')
    expect(back.searchParams.get('broker_error')).toBe('PROVIDER_ERROR')
    expect(back.searchParams.get('error_description')).toContain('request_uri of')
  })

  it('a verification_uri_complete of 900 KB is left out: /start sends the browser to verification_uri', async () => {
    const res = await storeRecord({
      auth_flow: 'device',
      auth_version: '2',
      issuer: `${hostileUrl}/as/long-urls/1`,
      client_id: 'a',
      client_auth: 'none',
    })
    const body = (await res.json()) as { hash: string; verification_uri_complete?: string }
    expect(res.status).toBe(200)
    expect(body.verification_uri_complete).toBeUndefined()
    const start = await fetch(`${broker.url}/start?hash=${body.hash}`, { redirect: 'manual' })
    expect(start.headers.get('location')).toBe('http://127.0.0.1:9/verify')
  })

  it.each([
    ['access_url', { auth_leg: '2' }, 1],
    ['par_url', { auth_leg: '3', par: true, callback: 'http://localhost:9/cb' }, 2],
  ])(
    "a record naming its own %s beside an issuer where the broker registers: the registered client's secret never goes there",
    async (field, rest, n) => {
      evil.length = 0
      const res = await storeRecord({
        auth_version: '2',
        issuer: `${hostileUrl}/as/honest/${n}`,
        [field]: `${hostileUrl}/evil/${field}`,
        ...rest,
      })
      const body = (await res.json()) as { hash?: string; code?: string; fields?: Record<string, string> }
      if (body.hash) await fetch(`${broker.url}/start?hash=${body.hash}`, { redirect: 'manual' })
      const seen = JSON.stringify(evil)
      const basic = Buffer.from('honest-client:the-honest-secret').toString('base64')
      expect(seen).not.toContain('the-honest-secret')
      expect(seen).not.toContain(basic)
      expect(res.status).toBe(400)
      expect(body.code).toBe('VALIDATION')
      expect(body.fields?.[field]).toContain('registers')
    },
  )
})

describe("the device flow's verification URIs and providers.allow", () => {
  it('refuses at /store a verification_uri outside providers.allow: /start never sends the browser there', async () => {
    // The server is allowed; where it sends the user (127.0.0.1:9) is not.
    const strict = await startBroker({ args: ['--store', 'memory', '--providers-allow', hostileUrl] })
    try {
      const res = await fetch(`${strict.url}/store`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          auth_flow: 'device',
          auth_version: '2',
          issuer: `${hostileUrl}/as/long-urls/2`,
          client_id: 'a',
          client_auth: 'none',
        }),
      })
      const body = (await res.json()) as { code: string; message: string; hash?: string }
      expect(res.status, JSON.stringify(body)).toBe(400)
      expect(body.code).toBe('PROVIDER_NOT_ALLOWED')
      expect(body.message).toContain('verification_uri outside providers.allow (http://127.0.0.1:9)')
      expect(body.hash).toBeUndefined()
    } finally {
      await strict.stop()
    }
  })
})

describe('registrations one key holder can make the broker keep', () => {
  it('are bounded per authorization server host, and every other flow is still stored (no STORE_FULL for a day)', async () => {
    const bounded = await startBroker({
      args: ['--store', 'memory', '--store-memory-limit', '1', '--registration-per-host', '5'],
    })
    try {
      const statuses: number[] = []
      for (let n = 200; n < 230; n++) {
        const res = await store(bounded, `${hostileUrl}/as/big/${n}`)
        const body = (await res.json()) as { code?: string; message?: string }
        statuses.push(res.status)
        if (res.status !== 200) {
          expect(res.status, JSON.stringify(body)).toBe(502)
          expect(body.message).toContain('registration.perHost')
        }
      }
      expect(statuses.filter((s) => s === 200)).toHaveLength(5)
      // An app's own flow is stored as ever.
      const own = await fetch(`${bounded.url}/store`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          auth_version: '2',
          auth_leg: '3',
          client_id: 'mine',
          authorize_url: 'http://127.0.0.1:9/authorize',
          access_url: 'http://127.0.0.1:9/token',
          callback: 'http://localhost:9/cb',
        }),
      })
      expect(own.status).toBe(200)
    } finally {
      await bounded.stop()
    }
  })
})
