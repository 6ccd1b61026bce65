import { type Server, createServer } from 'node:http'
import { type AddressInfo, connect } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildServer } from '../src/broker/http/build.js'
import type { Broker } from '../src/broker/index.js'
import { compilePolicy, setProviderPolicy } from '../src/broker/outbound/policy.js'
import { configSchema } from '../src/config/schema.js'
import { memoryBroker } from './helpers/deps.js'
import { runCli } from './helpers/broker.js'

// The attacks of issue 15 against the broker's routes, each one that got through before. The
// broker is built in-process with a production-like config (listen 0.0.0.0, api.keys; it never
// listens there) or its defaults; "internal" services are loopback servers that count every hit.

const KEY = 'an-api-key-of-16-chars'
const auth = { authorization: `Bearer ${KEY}` }

let internal: Server
let internalPort = 0
let hits = 0

beforeAll(async () => {
  internal = createServer((req, res) => {
    hits++
    req.resume()
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end('{"access_token":"INTERNAL-ADMIN-DATA","error":"INTERNAL-ERROR-FIELD"}')
  })
  await new Promise<void>((r) => internal.listen(0, '127.0.0.1', r))
  internalPort = (internal.address() as AddressInfo).port
})
afterAll(async () => {
  internal.closeAllConnections()
  await new Promise((r) => internal.close(r))
})

async function brokerApp(input: Parameters<typeof memoryBroker>[0]): Promise<{ broker: Broker; app: FastifyInstance }> {
  const broker = await memoryBroker(input)
  return { broker, app: await buildServer(broker) }
}

const twoLegged = (accessUrl: string) => ({
  auth_version: '2',
  auth_leg: '2',
  client_id: 'c',
  client_secret: 's',
  access_url: accessUrl,
})

describe('SSRF: a production-like broker (listen 0.0.0.0, api.keys, no providers.allow)', () => {
  let broker: Broker
  let app: FastifyInstance
  beforeAll(async () => {
    ;({ broker, app } = await brokerApp({ listen: '0.0.0.0', api: { keys: [KEY] } }))
    // A hostile DNS: these names answer with loopback addresses.
    setProviderPolicy(
      compilePolicy(broker.config, {
        resolve: async (name) =>
          name === 'looks-public.attacker.example'
            ? [{ address: '127.0.0.1', family: 4 }]
            : name === 'v6.attacker.example'
              ? [{ address: '::ffff:127.0.0.1', family: 6 }]
              : Promise.reject(Object.assign(new Error('ENOTFOUND'), { code: 'ENOTFOUND' })),
      }),
    )
  })
  afterAll(async () => {
    await app?.close()
    await broker?.close()
  })

  it('refuses every spelling of loopback, unspecified and metadata addresses at /store, naming the field', async () => {
    const start = hits
    for (const host of [
      '127.0.0.1',
      '2130706433',
      '0x7f000001',
      '0x7f.0.0.1',
      '017700000001',
      '127.1',
      '[::1]',
      '[::ffff:127.0.0.1]',
      '[::ffff:7f00:1]',
      '0.0.0.0',
      '0',
      '[::]',
      'localhost',
      '169.254.169.254',
      '[::ffff:a9fe:a9fe]',
      '[fd00:ec2::254]',
      '10.0.0.1',
      '192.168.1.1',
    ]) {
      const res = await app.inject({
        method: 'POST',
        url: '/store',
        headers: auth,
        payload: twoLegged(`http://${host}:${internalPort}/admin`),
      })
      expect(res.statusCode, host).toBe(400)
      expect(res.json(), host).toMatchObject({ code: 'PROVIDER_NOT_ALLOWED', field: 'access_url' })
    }
    expect(hits).toBe(start)
  })

  it('refuses, at connect time, a name that resolves to loopback: the flow fails and nothing is read back', async () => {
    const start = hits
    for (const name of ['looks-public.attacker.example', 'v6.attacker.example']) {
      const stored = await app.inject({
        method: 'POST',
        url: '/store',
        headers: auth,
        payload: twoLegged(`http://${name}:${internalPort}/admin`),
      })
      expect(stored.statusCode, stored.body).toBe(200)
      const { hash } = stored.json() as { hash: string }
      const res = await app.inject({ url: `/start?hash=${hash}` })
      expect(res.statusCode).toBe(400)
      expect(res.json()).toMatchObject({ code: 'PROVIDER_NOT_ALLOWED' })
      const check = (await app.inject({ url: `/hash-check?hash=${hash}` })).json() as { error: { code: string } }
      expect(check.error.code).toBe('PROVIDER_NOT_ALLOWED')
      for (const body of [res.body, JSON.stringify(check)]) {
        expect(body).not.toMatch(/INTERNAL-|127\.0\.0\.1|ffff|ECONN/)
      }
    }
    expect(hits).toBe(start)
  })

  it('takes the same refusal for request_url (OAuth 1.0a) and verify_url (OAuth Echo)', async () => {
    const url = `http://127.0.0.1:${internalPort}/x`
    const oauth1 = {
      auth_version: '1',
      auth_leg: '3',
      consumer_key: 'k',
      consumer_secret: 's',
      request_url: url,
      authorize_url: 'https://api.example.com/authorize',
      access_url: 'https://api.example.com/access',
    }
    const echo = { auth_type: 'oauth', auth_flow: 'echo', auth_version: '1', consumer_key: 'k', consumer_secret: 's' }
    for (const [payload, field] of [
      [oauth1, 'request_url'],
      [{ ...echo, oauth_token: 't', oauth_token_secret: 'ts', verify_url: url }, 'verify_url'],
    ] as const) {
      const res = await app.inject({ method: 'POST', url: '/store', headers: auth, payload })
      expect(res.json(), field).toMatchObject({ code: 'PROVIDER_NOT_ALLOWED', field })
    }
  })
})

describe('a developer broker (the defaults: listen 127.0.0.1)', () => {
  let broker: Broker
  let app: FastifyInstance
  beforeAll(async () => {
    ;({ broker, app } = await brokerApp({}))
  })
  afterAll(async () => {
    await app?.close()
    await broker?.close()
  })

  it('calls a provider on loopback, but never link-local, metadata or unspecified addresses', async () => {
    const ok = await app.inject({
      method: 'POST',
      url: '/store',
      payload: twoLegged(`http://127.0.0.1:${internalPort}/token`),
    })
    expect(ok.statusCode).toBe(200)
    const start = hits
    for (const host of ['169.254.169.254', '0.0.0.0', '0', '[::]', '[fe80::1]', '224.0.0.1', '255.255.255.255']) {
      const res = await app.inject({
        method: 'POST',
        url: '/store',
        payload: twoLegged(`http://${host}:${internalPort}/latest/meta-data/`),
      })
      expect(res.json(), host).toMatchObject({ code: 'PROVIDER_NOT_ALLOWED', field: 'access_url' })
    }
    expect(hits).toBe(start)
  })
})

describe('open redirect and providers.allow', () => {
  let broker: Broker
  let app: FastifyInstance
  beforeAll(async () => {
    ;({ broker, app } = await brokerApp({
      listen: '0.0.0.0',
      api: { keys: [KEY] },
      providers: { allow: ['https://github.com/login/oauth/', '*.example.com'] },
    }))
  })
  afterAll(async () => {
    await app?.close()
    await broker?.close()
  })

  const threeLegged = (authorize: string) => ({
    auth_version: '2',
    auth_leg: '3',
    client_id: 'c',
    authorize_url: authorize,
    access_url: 'https://github.com/login/oauth/access_token',
    callback: 'http://localhost:8080/cb',
  })

  it('refuses an authorize_url outside providers.allow, so /start never sends a browser there', async () => {
    for (const url of ['https://evil.example/login', 'https://github.com/login/oauthx', 'https://example.com.evil/']) {
      const res = await app.inject({ method: 'POST', url: '/store', headers: auth, payload: threeLegged(url) })
      expect(res.statusCode, url).toBe(400)
      expect(res.json()).toMatchObject({ code: 'PROVIDER_NOT_ALLOWED', field: 'authorize_url' })
      expect(res.json().message).toContain('providers.allow')
    }
  })

  it('redirects to an allowed provider', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/store',
      headers: auth,
      payload: threeLegged('https://id.example.com/authorize'),
    })
    expect(res.statusCode, res.body).toBe(200)
    const start = await app.inject({ url: `/start?hash=${(res.json() as { hash: string }).hash}` })
    expect(start.statusCode).toBe(302)
    expect(start.headers.location).toMatch(/^https:\/\/id\.example\.com\/authorize\?/)
  })
})

describe('listening beyond loopback', () => {
  it('refuses to start without api.keys or api.open, exit 2, saying which to set', async () => {
    const { code, stderr } = await runCli(['serve', '--listen', '0.0.0.0', '--port', '0', '--store', 'memory'])
    expect(code).toBe(2)
    expect(stderr).toMatch(/api\.keys/)
    expect(stderr).toMatch(/api\.open/)
  })

  it('takes api.open as the explicit choice', () => {
    expect(() => configSchema.parse({ listen: '0.0.0.0', api: { open: true } })).not.toThrow()
    expect(() => configSchema.parse({ listen: '0.0.0.0', api: { keys: [KEY] } })).not.toThrow()
    expect(() => configSchema.parse({ listen: '0.0.0.0' })).toThrow(/api\.keys/)
    expect(() => configSchema.parse({})).not.toThrow()
  })
})

describe('providers.allow naming a link-local or metadata address', () => {
  // Such an entry was accepted, and then a record naming that address passed /store: the broker
  // never calls these addresses, so the list may not name them.
  it.each([
    ['169.254.169.254', '169.254.169.254'],
    ['http://[fe80::1]:8080', 'http://[fe80::1]:8080'],
    ['http://100.100.100.200/latest', 'http://100.100.100.200/latest'],
  ])('broker serve --providers-allow %s exits 2 at start-up naming the key and the value', async (entry, shown) => {
    const { code, stderr } = await runCli(['serve', '--port', '0', '--store', 'memory', '--providers-allow', entry])
    expect(code).toBe(2)
    expect(stderr).toContain('Error CONFIG_INVALID')
    expect(stderr).toContain(`providers.allow.0 (command-line flag): "${shown}" names a link-local`)
  })

  it('a policy built without the config check still never lets such an address through /store', async () => {
    const policy = compilePolicy({ listen: '127.0.0.1', providers: { allow: ['169.254.169.254', 'http://[fe80::1]'] } })
    for (const url of ['http://169.254.169.254/latest/meta-data/', 'http://[fe80::1]/token']) {
      const { destinationRefused } = await import('../src/broker/outbound/record-check.js')
      expect(destinationRefused(url, policy), url).toBe('forbidden')
    }
  })
})

describe('slow clients', () => {
  let broker: Broker
  let app: FastifyInstance
  let port = 0
  beforeAll(async () => {
    ;({ broker, app } = await brokerApp({ server: { requestTimeout: 1500, headersTimeout: 1000 } }))
    await app.listen({ port: 0, host: '127.0.0.1' })
    port = (app.server.address() as AddressInfo).port
  })
  afterAll(async () => {
    await app?.close()
    await broker?.close()
  })

  it('answers a body trickled byte by byte with 408 from the registry and closes the socket', async () => {
    const socket = connect(port, '127.0.0.1')
    let answer = ''
    socket.on('data', (d) => (answer += d.toString()))
    const closed = new Promise<number>((r) => socket.on('close', () => r(Date.now())))
    const began = Date.now()
    socket.write(
      'POST /store HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{',
    )
    const trickle = setInterval(() => socket.writable && socket.write(' '), 200)
    const end = await closed
    clearInterval(trickle)
    expect(end - began).toBeLessThan(4000)
    expect(answer).toMatch(/^HTTP\/1\.1 408 /)
    expect(answer).toMatch(/x-content-type-options: nosniff/i)
    expect(answer).toMatch(/cache-control: no-store/i)
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toMatchObject({ code: 'REQUEST_TIMEOUT' })
  })

  it('closes connections past server.maxConnections at once and serves again when they go', async () => {
    const capped = await brokerApp({ server: { maxConnections: 2 } })
    await capped.app.listen({ port: 0, host: '127.0.0.1' })
    const cappedPort = (capped.app.server.address() as AddressInfo).port
    const open = () => {
      const socket = connect(cappedPort, '127.0.0.1')
      const closed = new Promise<boolean>((r) => socket.on('close', () => r(true)))
      socket.on('error', () => {})
      return { socket, closed }
    }
    try {
      const held = [open(), open()]
      await Promise.all(held.map((h) => new Promise((r) => h.socket.once('connect', r))))
      await new Promise((r) => setTimeout(r, 100))
      const third = open()
      expect(await Promise.race([third.closed, new Promise((r) => setTimeout(() => r(false), 2000))])).toBe(true)
      for (const h of held) h.socket.destroy()
      await Promise.all(held.map((h) => h.closed))
      await new Promise((r) => setTimeout(r, 100))
      expect((await fetch(`http://127.0.0.1:${cappedPort}/ping`)).status).toBe(200)
    } finally {
      await capped.app.close()
      await capped.broker.close()
    }
  })

  it('answers malformed HTTP from the registry with the security headers', async () => {
    const socket = connect(port, '127.0.0.1')
    let answer = ''
    socket.on('data', (d) => (answer += d.toString()))
    const closed = new Promise<void>((r) => socket.on('close', () => r()))
    socket.write('GET / HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n')
    await closed
    expect(answer).toMatch(/^HTTP\/1\.1 400 /)
    expect(answer).toMatch(/x-frame-options: DENY/i)
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toMatchObject({ code: 'VALIDATION' })
  })

  it('answers an unknown route and a wrong method from the registry with the security headers', async () => {
    for (const res of [await app.inject({ url: '/nope' }), await app.inject({ method: 'DELETE', url: '/store' })]) {
      expect(res.statusCode).toBe(404)
      expect(res.headers['x-content-type-options']).toBe('nosniff')
      expect(res.json()).toMatchObject({ code: 'NOT_FOUND' })
    }
  })
})
