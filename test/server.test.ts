import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startCallbackApp, type CallbackApp } from './helpers/app.js'
import { type BrokerProcess, runCli, startBroker } from './helpers/broker.js'
import { Browser } from './helpers/browser.js'
import { type OAuth2Provider, startOAuth2Provider } from './helpers/oauth2-provider.js'
import { waitFor } from './helpers/ports.js'
import { type RedisServer, startRedis } from './helpers/redis.js'

let redis: RedisServer
let provider: OAuth2Provider
let app: CallbackApp

beforeAll(async () => {
  ;[redis, provider, app] = await Promise.all([startRedis(), startOAuth2Provider(), startCallbackApp()])
})

afterAll(async () => {
  await Promise.all([redis?.stop(), provider?.stop(), app?.close()])
})

async function store(broker: BrokerProcess, record: Record<string, string>, form = false): Promise<{ hash: string; url: string }> {
  const res = await fetch(`${broker.url}/store`, {
    method: 'POST',
    headers: { 'content-type': form ? 'application/x-www-form-urlencoded' : 'application/json' },
    body: form ? new URLSearchParams(record).toString() : JSON.stringify(record),
  })
  expect(res.status, await res.clone().text()).toBe(200)
  return (await res.json()) as { hash: string; url: string }
}

const lastDelivery = () => app.received[app.received.length - 1]!

/** The OAuth 2 flows end to end against one running broker. */
function flowSuite(label: string, brokerArgs: () => string[]) {
  describe(`OAuth 2 flows, ${label}`, () => {
    let broker: BrokerProcess
    beforeAll(async () => {
      broker = await startBroker({ args: brokerArgs() })
    })
    afterAll(async () => {
      await broker?.stop()
    })

    it('runs 3-legged with PKCE verified by the provider and delivers to the app', async () => {
      const { url } = await store(broker, {
        auth_version: '2',
        auth_leg: '3',
        client_id: 'app-client',
        client_secret: 'app-secret',
        authorize_url: provider.authorizeUrl,
        access_url: provider.tokenUrl,
        callback: app.callback,
        scope: 'openid profile',
        state: 'my-app-state',
      })
      const browser = new Browser()
      const res = await browser.go(url)
      expect(res.status).toBe(200)
      expect(res.body).toBe('app got it')
      // start → provider authorize → broker callback → app
      expect(res.hops.map((h) => h.status)).toEqual([302, 302, 302, 200])
      const got = lastDelivery().query
      expect(got.access_token).toMatch(/^ey/)
      expect(got.refresh_token).toBeTruthy()
      expect(got.token_type).toBe('Bearer')
      expect(got.state).toBe('my-app-state')
      const authorize = provider.authorizeRequests.at(-1)!
      expect(authorize.code_challenge_method).toBe('S256')
      const token = provider.tokenRequests.at(-1)!
      expect(token.grant_type).toBe('authorization_code')
      expect(token.code_verifier).toMatch(/^[\w-]{43}$/)
    })

    it('runs 2-legged client credentials, then refresh_token with the refresh token', async () => {
      const { url } = await store(broker, { auth_version: '2', auth_leg: '2', client_id: 'c', client_secret: 's', access_url: provider.tokenUrl, callback: app.callback, scope: 'api' })
      await new Browser().go(url)
      expect(lastDelivery().query.access_token).toMatch(/^ey/)
      expect(provider.tokenRequests.at(-1)!.grant_type).toBe('client_credentials')

      const refreshed = await store(broker, { auth_version: '2', auth_leg: '2', grant_type: 'refresh_token', refresh_token: 'rt-123', client_id: 'c', access_url: provider.tokenUrl })
      const res = await fetch(`${broker.url}/start?hash=${refreshed.hash}`)
      expect(res.status).toBe(200)
      const body = (await res.json()) as Record<string, string>
      expect(body.access_token).toMatch(/^ey/)
      expect(body.refresh_token).toBeTruthy()
      expect(provider.tokenRequests.at(-1)).toMatchObject({ grant_type: 'refresh_token', refresh_token: 'rt-123' })
    })

    it('runs the resource owner password flow', async () => {
      const { hash } = await store(broker, { auth_flow: 'owner_resources', auth_version: '2', client_id: 'c', access_url: provider.tokenUrl, username: 'alice', password: 'pw', callback: app.callback })
      const res = await new Browser().go(`http://localhost:${broker.port}/start?hash=${hash}`)
      expect(res.status).toBe(200)
      expect(lastDelivery().query.access_token).toMatch(/^ey/)
      expect(provider.tokenRequests.at(-1)).toMatchObject({ grant_type: 'password', username: 'alice' })
    })

    it('completes a flow stored Guardian-style with a form body', async () => {
      const { hash } = await store(broker, { auth_type: 'oauth', auth_version: '2', auth_leg: '3', client_id: 'g', authorize_url: provider.authorizeUrl, access_url: provider.tokenUrl, callback: app.callback }, true)
      const res = await new Browser().go(`http://localhost:${broker.port}/start?hash=${hash}`)
      expect(res.body).toBe('app got it')
      expect(lastDelivery().query.access_token).toMatch(/^ey/)
    })
  })
}

flowSuite('real Redis', () => ['--store', 'redis', '--store-port', String(redis.port)])
flowSuite('embedded store', () => ['--store', 'memory'])

describe('broker serve', () => {
  it('forgets a flow after store.expire: /start after 2 s is a 404', async () => {
    const broker = await startBroker({ args: ['--store', 'redis', '--store-port', String(redis.port), '--expire', '1'] })
    try {
      const { hash } = await store(broker, { auth_version: '2', auth_leg: '2', client_id: 'c', access_url: provider.tokenUrl })
      await new Promise((r) => setTimeout(r, 2000))
      const res = await fetch(`${broker.url}/start?hash=${hash}`)
      expect(res.status).toBe(404)
      expect(((await res.json()) as { code: string }).code).toBe('UNKNOWN_HASH')
    } finally {
      await broker.stop()
    }
  })

  it('writes the pid file, runs two workers on Redis, and removes the pid file on SIGTERM with exit 0', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'broker-pid-'))
    const broker = await startBroker({ args: ['--store', 'redis', '--store-port', String(redis.port), '--workers', '2', '--pid-dir', `${dir}/`] })
    const pidFile = join(dir, '.broker.pid')
    expect(readFileSync(pidFile, 'utf8').trim()).toBe(String(broker.proc.pid))
    await waitFor(async () => /2 workers, store: redis/.test(broker.stderr()), 10_000, 'both workers ready')
    expect(await broker.stop('SIGTERM')).toBe(0)
    expect(existsSync(pidFile)).toBe(false)
  })

  it('uses the embedded store with a notice when Redis does not answer (auto)', async () => {
    const broker = await startBroker({ args: ['--store-port', '1'], env: { BROKER_WORKERS: '2' } })
    try {
      expect(broker.stderr()).toMatch(/embedded in-process store/)
      expect(broker.stderr()).toMatch(/workers set to 1/)
      expect((await fetch(`${broker.url}/ping`)).status).toBe(200)
    } finally {
      await broker.stop()
    }
  })

  it('fails fast with --store redis when Redis is not there', async () => {
    const res = await runCli(['serve', '--store', 'redis', '--store-port', '1', '--port', '0'])
    expect(res.code).toBe(1)
    expect(res.stderr).toMatch(/STORE_UNAVAILABLE.*127\.0\.0\.1:1/)
  })

  it('exits 2 naming the key and file for a bad config, starting nothing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'broker-cfg-'))
    writeFileSync(join(dir, 'bad.json'), JSON.stringify({ pid: { dir: '/tmp' }, colour: 'blue' }))
    const res = await runCli(['serve', '-c', 'bad.json'], { cwd: dir })
    expect(res.code).toBe(2)
    expect(res.stderr).toMatch(/pid\.dir .*bad\.json.*slash/)
    expect(res.stderr).toMatch(/colour/)
    expect(existsSync(join(dir, '.broker.pid'))).toBe(false)
  })

  it('documents every option in --help', async () => {
    const res = await runCli(['serve', '--help'])
    expect(res.code).toBe(0)
    for (const flag of ['--config', '--port', '--workers', '--host', '--protocol', '--pid-dir', '--store', '--store-host', '--store-port', '--store-pass', '--expire', '--callbacks-allow', '--delivery-allow', '--plugins-dir', '--provider-timeout']) {
      expect(res.stdout).toContain(flag)
    }
  })
})
