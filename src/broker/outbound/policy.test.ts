import { type Server, createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { FlowError } from '../../../flows/contract.js'
import { providerFetch } from '../flow/context.js'
import { classifyAddress } from '../../config/addresses.js'
import { compilePolicy, providerPolicy, type Resolver, setProviderPolicy } from './policy.js'

// The connect-time guard against a real server on loopback that counts what reaches it: every
// refused spelling and name must leave it untouched.

let server: Server
let port = 0
let hits = 0
const before = providerPolicy()

beforeAll(async () => {
  server = createServer((_req, res) => {
    hits++
    res.end('{"access_token":"internal-data"}')
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  port = (server.address() as AddressInfo).port
})
afterAll(async () => {
  server.closeAllConnections()
  await new Promise((r) => server.close(r))
})
afterEach(() => setProviderPolicy(before))

/** Names the stub resolves, as a hostile DNS would answer. */
const stub =
  (names: Record<string, string[]>): Resolver =>
  async (hostname) => {
    const addresses = names[hostname]
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' })
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }))
  }

const exposed = { listen: '0.0.0.0', providers: {} }

async function fetchError(url: string): Promise<FlowError> {
  const err: unknown = await providerFetch(url, { method: 'POST', body: 'grant_type=x' }, 2000).then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(err, url).toBeInstanceOf(FlowError)
  return err as FlowError
}

describe('classifyAddress', () => {
  it.each([
    ['127.0.0.1', 'internal'],
    ['::1', 'internal'],
    ['::ffff:127.0.0.1', 'internal'],
    ['::ffff:7f00:1', 'internal'],
    ['64:ff9b::7f00:1', 'internal'],
    ['10.1.2.3', 'internal'],
    ['192.168.0.1', 'internal'],
    ['fd12::1', 'internal'],
    ['169.254.169.254', 'forbidden'],
    ['::ffff:169.254.169.254', 'forbidden'],
    ['fd00:ec2::254', 'forbidden'],
    ['100.100.100.200', 'forbidden'],
    ['fe80::1', 'forbidden'],
    ['0.0.0.0', 'forbidden'],
    ['::', 'forbidden'],
    ['255.255.255.255', 'forbidden'],
    ['224.0.0.1', 'forbidden'],
    ['ff02::1', 'forbidden'],
    ['::7f00:1', 'forbidden'],
    ['not an address', 'forbidden'],
    ['93.184.215.14', 'public'],
    ['2606:4700::6810:84e5', 'public'],
  ])('%s is %s', (address, kind) => {
    expect(classifyAddress(address)).toBe(kind)
  })
})

describe('providers.allow', () => {
  const policy = compilePolicy({
    listen: '0.0.0.0',
    providers: { allow: ['https://id.example.com', 'https://api.example.org/oauth', '*.corp.example'] },
  })

  it('allows an origin whole, a prefix on a path boundary, and subdomains of a pattern', () => {
    expect(policy.allows('https://id.example.com/any/path?x=1')).toBe(true)
    expect(policy.allows('https://api.example.org/oauth')).toBe(true)
    expect(policy.allows('https://api.example.org/oauth/token')).toBe(true)
    expect(policy.allows('https://login.corp.example/authorize')).toBe(true)
  })

  it('refuses other schemes, ports, hosts, paths past the boundary and look-alike hosts', () => {
    for (const url of [
      'http://id.example.com/',
      'https://id.example.com:8443/',
      'https://id.example.com.evil.example/',
      'https://evil.example/?https://id.example.com',
      'https://api.example.org/oauthx',
      'https://api.example.org/',
      'https://corp.example/',
      'https://corp.example.evil/',
      'ftp://login.corp.example/',
    ])
      expect(policy.allows(url), url).toBe(false)
  })
})

describe('providerFetch under the address guard', () => {
  it('reaches a loopback provider while the broker listens on loopback (a developer machine)', async () => {
    setProviderPolicy(compilePolicy({ listen: '127.0.0.1', providers: {} }))
    const answer = await providerFetch(`http://127.0.0.1:${port}/token`, {}, 2000)
    expect(answer.status).toBe(200)
  })

  it('refuses every spelling of an internal address when listening beyond loopback, reaching nothing', async () => {
    setProviderPolicy(compilePolicy(exposed))
    const start = hits
    for (const host of [
      '127.0.0.1',
      '2130706433',
      '0x7f000001',
      '0x7f.1',
      '0177.0.0.1',
      '127.1',
      '[::1]',
      '[::ffff:127.0.0.1]',
      '[::ffff:7f00:1]',
      '0.0.0.0',
      '0',
      '[::]',
      'localhost',
    ]) {
      const err = await fetchError(`http://${host}:${port}/token`)
      expect(err.brokerCode, host).toBe('PROVIDER_NOT_ALLOWED')
      // The origin as the record gave it, no socket error: nothing a port scan could read.
      expect(err.description).not.toMatch(/ECONN|socket|connection/i)
    }
    expect(hits).toBe(start)
  })

  it('never calls link-local or metadata addresses, even on a developer machine', async () => {
    setProviderPolicy(compilePolicy({ listen: '127.0.0.1', providers: {} }))
    for (const host of ['169.254.169.254', '[::ffff:169.254.169.254]', '[fe80::1]', '0.0.0.0', '[fd00:ec2::254]'])
      expect((await fetchError(`http://${host}:${port}/latest/meta-data/`)).brokerCode, host).toBe(
        'PROVIDER_NOT_ALLOWED',
      )
  })

  it('judges a name by the address it resolves to at connect time (a name pointing at loopback)', async () => {
    const names = { 'internal.attacker.example': ['127.0.0.1'], 'v6.attacker.example': ['::ffff:127.0.0.1'] }
    setProviderPolicy(compilePolicy(exposed, { resolve: stub(names) }))
    const start = hits
    for (const name of Object.keys(names)) {
      const err = await fetchError(`http://${name}:${port}/token`)
      expect(err.brokerCode, name).toBe('PROVIDER_NOT_ALLOWED')
      expect(err.description).toContain(`http://${name}:${port}`)
      // The address the name resolved to is not told.
      expect(err.description).not.toMatch(/127\.0\.0\.1|ffff/)
    }
    expect(hits).toBe(start)
    // The same stub on a loopback broker connects: the refusal above is the guard's, not the stub's.
    setProviderPolicy(compilePolicy({ listen: '127.0.0.1', providers: {} }, { resolve: stub(names) }))
    expect((await providerFetch(`http://internal.attacker.example:${port}/token`, {}, 2000)).status).toBe(200)
    expect(hits).toBe(start + 1)
  })

  it('calls an internal host beyond loopback when providers.allow names it', async () => {
    setProviderPolicy(
      compilePolicy(
        { listen: '0.0.0.0', providers: { allow: [`http://keycloak.internal:${port}`] } },
        { resolve: stub({ 'keycloak.internal': ['127.0.0.1'], 'other.internal': ['127.0.0.1'] }) },
      ),
    )
    expect((await providerFetch(`http://keycloak.internal:${port}/token`, {}, 2000)).status).toBe(200)
    expect((await fetchError(`http://other.internal:${port}/token`)).brokerCode).toBe('PROVIDER_NOT_ALLOWED')
  })

  it('says a name that does not resolve without the resolver error', async () => {
    setProviderPolicy(compilePolicy(exposed, { resolve: stub({}) }))
    const err = await fetchError('http://nowhere.example/')
    expect(err).toMatchObject({ brokerCode: 'PROVIDER_ERROR' })
    expect(err.description).toBe('Could not reach http://nowhere.example: its host name does not resolve')
  })

  it('gives a refused connection and a reset the same words (no port-scanner oracle)', async () => {
    setProviderPolicy(compilePolicy({ listen: '127.0.0.1', providers: {} }))
    const closed = createServer()
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r))
    const deadPort = (closed.address() as AddressInfo).port
    await new Promise((r) => closed.close(r))
    const resetting = createServer((req) => req.socket.destroy())
    await new Promise<void>((r) => resetting.listen(0, '127.0.0.1', r))
    const resetPort = (resetting.address() as AddressInfo).port
    try {
      const refused = await fetchError(`http://127.0.0.1:${deadPort}/`)
      const reset = await fetchError(`http://127.0.0.1:${resetPort}/`)
      expect(refused.description.replace(String(deadPort), 'P')).toBe(reset.description.replace(String(resetPort), 'P'))
      expect(refused.description).not.toMatch(/ECONNREFUSED|ECONNRESET|socket/i)
    } finally {
      await new Promise((r) => resetting.close(r))
    }
  })
})
