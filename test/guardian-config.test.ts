import { execFileSync } from 'node:child_process'
import { Redis } from 'ioredis'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bindingCookie, cookieKeys } from '../src/broker/binding-cookie.js'
import type { ResolvedConfig } from '../src/broker/deps.js'
import { FlowStore } from '../src/broker/store/flow-store.js'
import { type CallbackApp, startCallbackApp } from './helpers/app.js'
import { type BrokerProcess, startBroker } from './helpers/broker.js'
import { Browser } from './helpers/browser.js'
import { type OAuth2Provider, startOAuth2Provider } from './helpers/oauth2-provider.js'
import { freePort } from './helpers/ports.js'
import { type RedisServer, startRedis } from './helpers/redis.js'

// Issue 33: a Mashape Guardian configuration file, every option of Guardian's table in it and nothing
// else, written where Guardian kept it (config/default.js, module.exports), starts a broker that
// completes a flow. The broker gets no flag but its config file's own (not even --port).
const COOKIE_SECRET = 'guardian cookie secret 0123456789'
const SESSION_SECRET = 'guardian session secret 9876543210'
const REDIS_PASS = 'guardian redis password'

describe("a Guardian configuration file (Guardian's option table, config/default.js)", () => {
  let redis: RedisServer
  let provider: OAuth2Provider
  let app: CallbackApp
  let broker: BrokerProcess
  let dir = ''
  let port = 0

  beforeAll(async () => {
    ;[redis, provider, app, port] = await Promise.all([
      startRedis(['--requirepass', REDIS_PASS]),
      startOAuth2Provider(),
      startCallbackApp(),
      freePort(),
    ])
    dir = mkdtempSync(join(tmpdir(), 'broker-guardian-'))
    mkdirSync(join(dir, 'config'))
    mkdirSync(join(dir, 'run'))
    const guardian = {
      host: `localhost:${port}`,
      protocol: 'http',
      port,
      workers: 2,
      pid: { dir: `${join(dir, 'run')}/` },
      store: { host: '127.0.0.1', port: redis.port, pass: REDIS_PASS, expire: 60 },
      cookie: { secret: COOKIE_SECRET },
      session: { secret: SESSION_SECRET },
    }
    writeFileSync(join(dir, 'config', 'default.js'), `module.exports = ${JSON.stringify(guardian, null, 2)}\n`)
    // BROKER_WORKERS '' is no value: the file's workers count.
    broker = await startBroker({ cwd: dir, port, portFromConfig: true, env: { BROKER_WORKERS: '' } })
  }, 60_000)
  afterAll(async () => {
    await broker?.stop()
    await Promise.all([provider?.stop(), app?.close(), redis?.stop()])
  })

  it('starts unchanged and completes a flow, with its cookie keyed by cookie.secret and its secrets in no log', async () => {
    const stored = await fetch(`http://127.0.0.1:${port}/store`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        auth_version: '2',
        auth_leg: '3',
        client_id: 'guardian-app',
        client_secret: 'guardian-app-secret',
        authorize_url: provider.authorizeUrl,
        access_url: provider.tokenUrl,
        callback: app.callback,
        state: 'app-state',
      }),
    })
    expect(stored.status).toBe(200)
    const { hash, url } = (await stored.json()) as { hash: string; url: string }
    // host and protocol build the start URL.
    expect(url).toBe(`http://localhost:${port}/start?hash=${hash}`)

    const browser = new Browser()
    const res = await browser.go(url)
    expect(res.body).toBe('app got it')
    expect(app.received.at(-1)!.query).toMatchObject({ state: 'app-state', token_type: 'Bearer' })
    expect(app.received.at(-1)!.query.access_token).toBeTruthy()

    // The binding cookie the browser got is the one cookie.secret names and values for this flow's run:
    // its nonce read from the store as the broker sealed it (no store.keys: under session.secret).
    const client = new Redis({ port: redis.port, password: REDIS_PASS })
    const entry = await new FlowStore(client, { expireSeconds: 60, callbackWaitSeconds: 60, secrets: [SESSION_SECRET] })
      .get(hash)
      .finally(() => client.disconnect())
    const keys = cookieKeys({
      cookie: { secret: COOKIE_SECRET },
      session: { secret: SESSION_SECRET },
    } as ResolvedConfig)
    const expected = bindingCookie(keys[0]!, hash, String(entry?.data.nonce), false)
    const cookies = (await browser.jar.getCookies(url)).map((c) => [c.key, c.value])
    expect(cookies).toContainEqual([expected.name, expected.value])
    // Under session.secret instead, the cookie would be another.
    const [bySession] = cookieKeys({ cookie: {}, session: { secret: SESSION_SECRET } } as ResolvedConfig)
    expect(cookies.map(([name]) => name)).not.toContain(
      bindingCookie(bySession!, hash, String(entry?.data.nonce), false).name,
    )

    // workers: 2 and the pid file in pid.dir.
    const workers = execFileSync('ps', ['-o', 'pid=', '--ppid', String(broker.proc.pid)], { encoding: 'utf8' })
      .split('\n')
      .filter((l) => l.trim())
    expect(workers).toHaveLength(2)
    expect(readFileSync(join(dir, 'run', '.broker.pid'), 'utf8').trim()).toBe(String(broker.proc.pid))
    expect(existsSync(join(dir, '.broker.pid'))).toBe(false)

    const output = broker.stderr()
    for (const secret of [COOKIE_SECRET, SESSION_SECRET, REDIS_PASS]) {
      expect(output).not.toContain(secret)
      expect(url).not.toContain(secret)
      for (const pid of workers) expect(readFileSync(`/proc/${pid.trim()}/environ`, 'utf8')).not.toContain(secret)
    }
  }, 60_000)
})
