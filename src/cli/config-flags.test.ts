import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type Interfaces, Parser } from '@oclif/core'
import { describe, expect, it } from 'vitest'
import { CONFIG_KEYS } from '../config/keys.js'
import { loadConfig } from '../config/load.js'
import { configFromFlags, serveFlags } from './config-flags.js'

const parse = async (argv: string[]) =>
  (await Parser.parse(argv, { flags: serveFlags() as Interfaces.FlagInput })).flags as Record<string, unknown>

describe('serveFlags', () => {
  it('keeps the flag each key has always had', () => {
    const flags = Object.fromEntries(CONFIG_KEYS.map((k) => [k.key, k.char ? `${k.flag} -${k.char}` : k.flag]))
    expect(flags).toEqual({
      host: 'host',
      protocol: 'protocol',
      port: 'port -p',
      listen: 'listen',
      workers: 'workers -w',
      'pid.dir': 'pid-dir',
      'store.driver': 'store',
      'store.host': 'store-host',
      'store.port': 'store-port',
      'store.pass': 'store-pass',
      'store.expire': 'expire',
      'store.callbackWait': 'callback-wait',
      'store.prefix': 'store-prefix',
      'store.timeout': 'store-timeout',
      'store.url': 'store-url',
      'store.tls.ca': 'store-tls-ca',
      'store.tls.rejectUnauthorized': 'store-tls-verify',
      'store.sentinels': 'store-sentinel',
      'store.name': 'store-name',
      'store.sentinelPass': 'store-sentinel-pass',
      'store.cluster': 'store-cluster',
      'store.replicas': 'store-replicas',
      'store.replicaShortfall': 'store-replica-shortfall',
      'store.memoryLimit': 'store-memory-limit',
      'store.keys': 'store-key',
      'session.secret': 'session-secret',
      'cookie.secret': 'cookie-secret',
      'cookie.previousSecrets': 'cookie-previous-secret',
      'callbacks.allow': 'callbacks-allow',
      'delivery.allow': 'delivery-allow',
      'plugins.dir': 'plugins-dir',
      'provider.timeout': 'provider-timeout',
      'body.limit': 'body-limit',
      'log.level': 'log-level',
      'admin.key': 'admin-key',
      'api.keys': 'api-key',
      'api.open': 'api-open',
      'providers.allow': 'providers-allow',
      'server.requestTimeout': 'request-timeout',
      'server.headersTimeout': 'headers-timeout',
      'server.keepAliveTimeout': 'keep-alive-timeout',
      'server.maxConnections': 'max-connections',
      'server.drainDelay': 'drain-delay',
      'rate.store': 'rate-store',
      'rate.start': 'rate-start',
      'rate.window': 'rate-window',
      'registration.clientName': 'registration-client-name',
      'registration.perHost': 'registration-per-host',
      'registration.logoUri': 'registration-logo-uri',
      'registration.clientUri': 'registration-client-uri',
      'registration.recheck': 'registration-recheck',
      'registration.ttl': 'registration-ttl',
    })
  })

  it('gives no flag an oclif default or env, so that an unset flag leaves the layers below it alone', async () => {
    expect(Object.values(serveFlags()).filter((f) => f.default !== undefined || f.env !== undefined)).toEqual([])
    expect(await parse([])).toEqual({})
  })

  it("names the key, its env variable and its default in every flag's help", () => {
    const flags = serveFlags()
    expect(flags.expire!.summary).toBe(
      '[default: 60, env: BROKER_STORE_EXPIRE] Seconds a stored flow lives until its start URL is visited (store.expire).',
    )
    for (const k of CONFIG_KEYS) expect(flags[k.flag]!.summary).toContain(`env: ${k.env}]`)
  })

  it("takes the schema's options and bounds", async () => {
    await expect(parse(['--store', 'disk'])).rejects.toThrow(/auto, redis, memory/)
    await expect(parse(['--port', '70000'])).rejects.toThrow(/less than or equal to 65535/)
    await expect(parse(['--store-timeout', '10'])).rejects.toThrow(/greater than or equal to 50/)
  })
})

describe('configFromFlags', () => {
  it('nests what was given under its key and leaves out the rest', async () => {
    const flags = await parse([
      '-p',
      '4000',
      '--expire',
      '5',
      '--store-sentinel',
      'a:1',
      '--store-sentinel',
      'b:2',
      '--delivery-allow',
      'code',
    ])
    expect(configFromFlags(flags)).toEqual({
      port: 4000,
      store: { expire: 5, sentinels: ['a:1', 'b:2'] },
      delivery: { allow: ['code'] },
    })
  })

  it('asks for TLS only when a TLS flag is given', async () => {
    expect(configFromFlags(await parse(['--store-url', 'rediss://r:6380']))).toEqual({
      store: { url: 'rediss://r:6380' },
    })
    expect(configFromFlags(await parse(['--no-store-tls-verify']))).toEqual({
      store: { tls: { rejectUnauthorized: false } },
    })
  })

  it('reads --pid-dir as the directory, slash or not', async () => {
    expect(configFromFlags(await parse(['--pid-dir', '/tmp']))).toEqual({ pid: { dir: '/tmp/' } })
    expect(configFromFlags(await parse(['--pid-dir', 'run/']))).toEqual({ pid: { dir: 'run/' } })
  })

  it('stays above the environment in the loader', async () => {
    const flags = configFromFlags(await parse(['--store-prefix', 'flag:']))
    const { config } = await loadConfig({
      cwd: mkdtempSync(join(tmpdir(), 'broker-flags-')),
      env: { BROKER_STORE_PREFIX: 'env:', BROKER_STORE_EXPIRE: '9' },
      flags,
    })
    expect(config.store).toMatchObject({ prefix: 'flag:', expire: 9 })
  })
})
