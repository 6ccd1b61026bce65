import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { BrokerError } from '../errors/index.js'
import { loadConfig } from './load.js'
import { drainDelayMs } from './schema.js'

const dir = () => mkdtempSync(join(tmpdir(), 'broker-config-'))

describe('loadConfig', () => {
  it('gives the documented defaults without a file', async () => {
    const { config, file } = await loadConfig({ cwd: dir(), env: {} })
    expect(file).toBeUndefined()
    expect(config).toMatchObject({
      host: 'localhost:3000',
      protocol: 'http',
      port: 3000,
      pid: { dir: './' },
      store: { host: '127.0.0.1', port: 6379, expire: 60, driver: 'auto' },
    })
    expect(config.workers).toBeGreaterThanOrEqual(1)
    expect(Object.isFrozen(config.store)).toBe(true)
  })

  it('reads ./config/default.js from the current directory when -c is absent', async () => {
    const cwd = dir()
    const { mkdirSync } = await import('node:fs')
    mkdirSync(join(cwd, 'config'))
    writeFileSync(join(cwd, 'config', 'default.js'), 'module.exports = { port: 4100 }')
    const { config } = await loadConfig({ cwd, env: {} })
    expect(config.port).toBe(4100)
    expect(config.host).toBe('localhost:4100')
  })

  it.each([
    ['c.mjs', 'export default { store: { expire: 5 } }'],
    ['c.cjs', 'module.exports = { store: { expire: 5 } }'],
    ['c.json', '{ "store": { "expire": 5 } }'],
  ])('reads %s relative to cwd', async (name, text) => {
    const cwd = dir()
    writeFileSync(join(cwd, name), text)
    const { config } = await loadConfig({ cwd, file: name, env: {} })
    expect(config.store.expire).toBe(5)
  })

  it('says where a config.json is not JSON, by line and column', async () => {
    const cwd = dir()
    writeFileSync(join(cwd, 'c.json'), '{\n  "port": 4000,\n  "store": { "driver": "memory", }\n}\n')
    const err = await loadConfig({ cwd, file: 'c.json', env: {} }).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(BrokerError)
    expect((err as BrokerError).message).toBe(
      `Cannot load the config file ${join(cwd, 'c.json')}: Expected double-quoted property name at line 3, column 34`,
    )
  })

  it('takes callbacks.allow from a file as one comma-separated string, as BROKER_CALLBACKS_ALLOW does', async () => {
    const cwd = dir()
    writeFileSync(
      join(cwd, 'c.json'),
      JSON.stringify({ callbacks: { allow: 'https://app.example/cb, http://localhost:8080/' } }),
    )
    const { config } = await loadConfig({ cwd, file: 'c.json', env: {} })
    expect(config.callbacks.allow).toEqual(['https://app.example/cb', 'http://localhost:8080/'])
  })

  it('still loads module.exports from a .js file under "type": "commonjs" through Node itself', async () => {
    const cwd = dir()
    writeFileSync(join(cwd, 'package.json'), '{ "type": "commonjs" }')
    writeFileSync(join(cwd, 'helper.js'), 'module.exports = 9\n')
    writeFileSync(join(cwd, 'broker.config.js'), "module.exports = { store: { expire: require('./helper') } }\n")
    const { config } = await loadConfig({ cwd, file: 'broker.config.js', env: {} })
    expect(config.store.expire).toBe(9)
  })

  it('drains for 0 ms by default on a loopback listen (no load balancer can be in front), else 5000 ms', async () => {
    const loopback = await loadConfig({ cwd: dir(), env: {} })
    expect(drainDelayMs(loopback.config)).toBe(0)
    const open = await loadConfig({ cwd: dir(), env: { BROKER_LISTEN: '0.0.0.0', BROKER_API_OPEN: 'true' } })
    expect(drainDelayMs(open.config)).toBe(5000)
    const given = await loadConfig({ cwd: dir(), env: { BROKER_SERVER_DRAINDELAY: '2000' } })
    expect(drainDelayMs(given.config)).toBe(2000)
  })

  it('applies flags over env over file', async () => {
    const cwd = dir()
    writeFileSync(join(cwd, 'c.json'), JSON.stringify({ port: 1, store: { expire: 10, host: 'file' } }))
    const { config } = await loadConfig({
      cwd,
      file: 'c.json',
      env: {
        BROKER_PORT: '2',
        BROKER_STORE_EXPIRE: '20',
        BROKER_CALLBACKS_ALLOW: 'https://a.example, https://b.example/x/',
      },
      flags: { port: 3 },
    })
    expect(config.port).toBe(3)
    expect(config.store.expire).toBe(20)
    expect(config.store.host).toBe('file')
    expect(config.callbacks.allow).toEqual(['https://a.example', 'https://b.example/x/'])
  })

  it('reads store.keys from BROKER_STORE_KEYS as a list, and refuses a key shorter than 32 characters', async () => {
    const [a, b] = ['k'.repeat(32), 'j'.repeat(40)]
    const { config } = await loadConfig({ cwd: dir(), env: { BROKER_STORE_KEYS: `${a},${b}` } })
    expect(config.store.keys).toEqual([a, b])
    await expect(loadConfig({ cwd: dir(), env: { BROKER_STORE_KEYS: 'short' } })).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
      message: expect.stringContaining('store.keys'),
    })
  })

  it('refuses a pid.dir without a trailing slash, naming the key and the file', async () => {
    const cwd = dir()
    writeFileSync(join(cwd, 'c.json'), JSON.stringify({ pid: { dir: '/tmp' } }))
    const err = await loadConfig({ cwd, file: 'c.json', env: {} }).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(BrokerError)
    expect((err as BrokerError).code).toBe('CONFIG_INVALID')
    expect((err as BrokerError).message).toMatch(/pid\.dir .*c\.json.*slash/)
    expect((err as BrokerError).exit).toBe(2)
  })

  it('refuses unknown keys and wrong types', async () => {
    const cwd = dir()
    writeFileSync(join(cwd, 'c.json'), JSON.stringify({ prot: 1, store: { port: 'x' } }))
    const err = (await loadConfig({ cwd, file: 'c.json', env: {} }).catch((e: unknown) => e)) as BrokerError
    expect(err.message).toContain('"prot"')
    expect(err.message).toMatch(/store\.port .*Expected number/)
  })

  it('blames the file, not the flags, when unset flags sit above a bad file value', async () => {
    const cwd = dir()
    writeFileSync(join(cwd, 'c.json'), JSON.stringify({ port: 'abc', colour: 'blue', store: { expire: 0, hots: 'x' } }))
    // What `serve` passes when no flag is given: every key present, every value undefined.
    const flags = { port: undefined, workers: undefined, store: { expire: undefined, host: undefined } }
    const err = (await loadConfig({ cwd, file: 'c.json', env: {}, flags }).catch((e: unknown) => e)) as BrokerError
    expect(err.message).toMatch(/\n {2}port \(\S+c\.json\): Expected number/)
    expect(err.message).toMatch(/\n {2}store\.expire \(\S+c\.json\): Number must be greater/)
    expect(err.message).toMatch(/\n {2}"colour" \(\S+c\.json\): unknown key; expected one of host, protocol, port/)
    expect(err.message).toMatch(/\n {2}"store\.hots" \(\S+c\.json\): unknown key; expected one of driver, host, port/)
    expect(err.message).not.toContain('command-line flag')
  })

  it('names the environment variable when it is the bad one', async () => {
    const err = (await loadConfig({ cwd: dir(), env: { BROKER_STORE_EXPIRE: 'soon' } }).catch(
      (e: unknown) => e,
    )) as BrokerError
    expect(err.message).toMatch(/store\.expire \(environment variable BROKER_STORE_EXPIRE\)/)
  })

  it('says when the file cannot be read', async () => {
    const err = (await loadConfig({ cwd: dir(), file: 'missing.js', env: {} }).catch((e: unknown) => e)) as BrokerError
    expect(err.code).toBe('CONFIG_INVALID')
    expect(err.message).toMatch(/missing\.js.*does not exist/)
  })
})

describe('host follows port', () => {
  it('points a localhost host from the file at a port given by flag or env', async () => {
    const cwd = dir()
    writeFileSync(join(cwd, 'c.json'), JSON.stringify({ host: 'localhost:3000', port: 3000 }))
    expect((await loadConfig({ cwd, file: 'c.json', env: {}, flags: { port: 4001 } })).config.host).toBe(
      'localhost:4001',
    )
    expect((await loadConfig({ cwd, file: 'c.json', env: { BROKER_PORT: '4002' } })).config.host).toBe('localhost:4002')
  })

  it('marks the host of --port 0 as localhost:0, for serve to fill in the port it picks', async () => {
    const cwd = dir()
    writeFileSync(join(cwd, 'c.json'), JSON.stringify({ host: 'localhost:3000', port: 3000 }))
    expect((await loadConfig({ cwd, file: 'c.json', env: {}, flags: { port: 0 } })).config).toMatchObject({
      host: 'localhost:0',
      port: 0,
    })
  })

  it('keeps a public host as given', async () => {
    const cwd = dir()
    writeFileSync(join(cwd, 'c.json'), JSON.stringify({ host: 'broker.example.com' }))
    expect((await loadConfig({ cwd, file: 'c.json', env: {}, flags: { port: 4001 } })).config.host).toBe(
      'broker.example.com',
    )
  })

  it('refuses a providers.allow entry naming a link-local, metadata or other never-called address', async () => {
    for (const entry of ['169.254.169.254', 'http://169.254.169.254', 'http://[fe80::1]:8080/', '0.0.0.0']) {
      const err = await loadConfig({
        cwd: dir(),
        env: {},
        flags: { providers: { allow: ['https://ok.example', entry] } },
      })
        .then(() => undefined)
        .catch((e: unknown) => e)
      expect(err, entry).toBeInstanceOf(BrokerError)
      expect((err as BrokerError).code).toBe('CONFIG_INVALID')
      expect((err as BrokerError).details).toEqual({ key: 'providers.allow.1' })
      expect((err as BrokerError).message).toContain(
        `providers.allow.1 (command-line flag): "${entry}" names a link-local`,
      )
    }
    // Loopback and private hosts may be named: the broker calls them when listed.
    const { config } = await loadConfig({
      cwd: dir(),
      env: {},
      flags: { providers: { allow: ['10.0.0.5', 'http://127.0.0.1:8080'] } },
    })
    expect(config.providers.allow).toEqual(['10.0.0.5', 'http://127.0.0.1:8080'])
  })
})
