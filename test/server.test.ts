import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BIN, type BrokerProcess, runCli, startBroker } from './helpers/broker.js'
import { flowSuite, storeAt } from './helpers/flow-suite.js'
import { type OAuth2Provider, startOAuth2Provider } from './helpers/oauth2-provider.js'
import { waitFor } from './helpers/ports.js'
import { type RedisServer, startRedis } from './helpers/redis.js'
import { CONFIG_LEAVES } from '../src/config/load.js'

let redis: RedisServer
let provider: OAuth2Provider

beforeAll(async () => {
  ;[redis, provider] = await Promise.all([startRedis(), startOAuth2Provider()])
})

afterAll(async () => {
  await Promise.all([redis?.stop(), provider?.stop()])
})

const store = (broker: BrokerProcess, record: Record<string, string>) => storeAt(broker.url, record)

flowSuite('real Redis', () => ({ args: ['--store', 'redis', '--store-port', String(redis.port)] }))
flowSuite('embedded store', () => ({ args: ['--store', 'memory'] }))

describe('broker serve', () => {
  it('forgets a flow after store.expire: /start after it is a 404', async () => {
    const broker = await startBroker({
      args: ['--store', 'redis', '--store-port', String(redis.port), '--expire', '1'],
    })
    try {
      const { hash } = await store(broker, {
        auth_version: '2',
        auth_leg: '2',
        client_id: 'c',
        access_url: provider.tokenUrl,
      })
      // Redis expires it (PX): there while it lives, then gone; /hash-check reads without spending the start URL.
      expect((await fetch(`${broker.url}/hash-check?hash=${hash}`)).status).toBe(200)
      await waitFor(async () => (await fetch(`${broker.url}/hash-check?hash=${hash}`)).status === 404, 5000, 'expiry')
      const res = await fetch(`${broker.url}/start?hash=${hash}`)
      expect(res.status).toBe(404)
      expect(((await res.json()) as { code: string }).code).toBe('UNKNOWN_HASH')
    } finally {
      await broker.stop()
    }
  })

  it('writes the pid file, runs two workers on Redis, and removes the pid file on SIGTERM with exit 0', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'broker-pid-'))
    const broker = await startBroker({
      args: ['--store', 'redis', '--store-port', String(redis.port), '--workers', '2', '--pid-dir', `${dir}/`],
    })
    const pidFile = join(dir, '.broker.pid')
    expect(readFileSync(pidFile, 'utf8').trim()).toBe(String(broker.proc.pid))
    await waitFor(async () => /2 workers, store: redis/.test(broker.stderr()), 10_000, 'both workers ready')
    expect(await broker.stop('SIGTERM')).toBe(0)
    expect(existsSync(pidFile)).toBe(false)
  })

  it('with --port 0 listens on a port it picks and builds its URLs with that port', async () => {
    const proc = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--store', 'memory', '--listen', '127.0.0.1'], {
      // Its pid file in a folder of its own, not in the checkout other test files' brokers run in.
      cwd: mkdtempSync(join(tmpdir(), 'broker-port0-')),
      env: { ...process.env, BROKER_LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'ignore', 'pipe'],
    })
    let err = ''
    proc.stderr!.on('data', (d) => (err += d))
    try {
      await waitFor(async () => /listening on port \d+/.test(err), 20_000, 'the listening notice')
      const [, port, announced] = /listening on port (\d+) \(http:\/\/localhost:(\d+)\)/.exec(err)!
      expect(Number(port)).toBeGreaterThan(0)
      expect(announced).toBe(port)
      const { url } = await storeAt(`http://127.0.0.1:${port}`, {
        auth_version: '2',
        auth_leg: '3',
        client_id: 'c',
        authorize_url: provider.authorizeUrl,
        access_url: provider.tokenUrl,
      })
      expect(url).toMatch(new RegExp(`^http://localhost:${port}/start\\?hash=`))
      const res = await fetch(url.replace('localhost', '127.0.0.1'), { redirect: 'manual' })
      expect(res.status).toBe(302)
    } finally {
      proc.kill('SIGTERM')
    }
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

  it.each([
    ['module', 'module.exports = { store: { driver: "memory", expire: 7 } }'],
    [
      'commonjs',
      'import { cpus } from "node:os"\nexport default { store: { driver: "memory", expire: 7 }, workers: Math.min(1, cpus().length) }',
    ],
  ])('reads -c file.js written in the other format than its package.json "type": %s', async (type, text) => {
    const dir = mkdtempSync(join(tmpdir(), 'broker-cfg-'))
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ type }))
    writeFileSync(join(dir, 'c.js'), text)
    const broker = await startBroker({ cwd: dir, args: ['-c', 'c.js'] })
    try {
      const { hash } = await store(broker, {
        auth_version: '2',
        auth_leg: '2',
        client_id: 'c',
        access_url: provider.tokenUrl,
      })
      const check = (await (await fetch(`${broker.url}/hash-check?hash=${hash}`)).json()) as { expires_in: number }
      expect(check.expires_in).toBeLessThanOrEqual(7)
    } finally {
      await broker.stop()
    }
  })

  it('documents every option in --help', async () => {
    const res = await runCli(['serve', '--help'])
    expect(res.code).toBe(0)
    for (const flag of [
      '--config',
      '--port',
      '--workers',
      '--host',
      '--protocol',
      '--pid-dir',
      '--store',
      '--store-host',
      '--store-port',
      '--store-pass',
      '--expire',
      '--callbacks-allow',
      '--delivery-allow',
      '--plugins-dir',
      '--provider-timeout',
    ]) {
      expect(res.stdout).toContain(flag)
    }
  })

  it('names every config key in --help, each with a flag', async () => {
    const res = await runCli(['serve', '--help'])
    // oclif wraps summaries: join the lines before looking for a key.
    const help = res.stdout.replace(/\s*\n\s*/g, ' ')
    const missing = CONFIG_LEAVES.map((leaf) => leaf.path.join('.')).filter(
      (key) => !new RegExp(`\\(${key.replace(/\./g, '\\.')}[,)]`).test(help),
    )
    expect(missing).toEqual([])
  })

  it('takes the session secret from its flag: no generated-secret warning', async () => {
    const broker = await startBroker({
      args: ['--store', 'memory', '--session-secret', 's'.repeat(32)],
    })
    try {
      expect(broker.stderr()).not.toMatch(/generated for this run/)
    } finally {
      await broker.stop()
    }
  })
})
