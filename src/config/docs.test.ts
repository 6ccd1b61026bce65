import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { configTable, guardianTable, TABLE_END, TABLE_START, withConfigTable, withGeneratedTables } from './docs.js'
import { GUARDIAN_KEYS } from './guardian.js'
import { CONFIG_KEYS } from './keys.js'
import { loadConfig } from './load.js'

const CONFIG_DOC = resolve(import.meta.dirname, '..', '..', 'docs', 'configuration.md')

describe("docs/configuration.md's table", () => {
  // On a failure, `npx vitest run src/config/docs.test.ts -u` writes the table from the schema.
  it('is the one the schema writes (and the Guardian table the one guardian.ts writes)', async () => {
    await expect(withGeneratedTables(readFileSync(CONFIG_DOC, 'utf8'))).toMatchFileSnapshot(CONFIG_DOC)
  })

  it('has a row for every key, with its default, env variable and flag', () => {
    const table = configTable()
    expect(table).toContain('| `store.expire` | `60` | `BROKER_STORE_EXPIRE` | `--expire` |')
    expect(table).toContain('| `workers` | CPU count | `BROKER_WORKERS` | `--workers`, `-w` |')
    expect(table.split('\n')).toHaveLength(CONFIG_KEYS.length + 2)
  })

  it('refuses a page without the markers', () => {
    expect(() => withConfigTable('# broker\n')).toThrow(/config-table/)
    expect(withConfigTable(`a\n${TABLE_START}\nold\n${TABLE_END}\nb`)).toBe(
      `a\n${TABLE_START}\n${configTable()}\n${TABLE_END}\nb`,
    )
  })
})

describe('coming from Guardian', () => {
  it("names every option of Guardian's table once, each a broker key", () => {
    const broker = new Set(CONFIG_KEYS.map((k) => k.key))
    expect(GUARDIAN_KEYS.map((g) => g.guardian)).toEqual([
      'host',
      'protocol',
      'port',
      'workers',
      'pid.dir',
      'store.host',
      'store.port',
      'store.pass',
      'store.expire',
      'cookie.secret',
      'session.secret',
    ])
    for (const g of GUARDIAN_KEYS) expect(broker.has(g.broker), g.broker).toBe(true)
    expect(guardianTable().split('\n')).toHaveLength(GUARDIAN_KEYS.length + 2)
  })

  it('takes a config file of every Guardian option, spelt as Guardian spelt it, and keeps each value', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'broker-guardian-'))
    const guardian = {
      host: 'auth.example.com',
      protocol: 'https',
      port: 3333,
      workers: 3,
      pid: { dir: '/var/run/' },
      store: { host: '10.1.2.3', port: 6380, pass: 'redis password', expire: 120 },
      cookie: { secret: 'a guardian cookie secret' },
      session: { secret: 'a guardian session secret' },
    }
    writeFileSync(join(dir, 'config.js'), `module.exports = ${JSON.stringify(guardian)}`)
    const { config } = await loadConfig({ file: 'config.js', cwd: dir, env: {} })
    const at = (obj: object, key: string) =>
      key.split('.').reduce<unknown>((o, k) => (o as Record<string, unknown>)[k], obj)
    for (const g of GUARDIAN_KEYS) expect(at(config, g.broker), g.guardian).toEqual(at(guardian, g.guardian))
  })
})

describe("docs/configuration.md's example config file", () => {
  it('loads as it is written, with its secrets from the environment', async () => {
    const page = readFileSync(CONFIG_DOC, 'utf8')
    const example = /## An example config file\n[\s\S]*?```js\n([\s\S]*?)```/.exec(page)?.[1]
    expect(example, 'a ```js block under "## An example config file"').toBeDefined()
    const dir = mkdtempSync(join(tmpdir(), 'broker-config-example-'))
    writeFileSync(join(dir, 'production.js'), example!)
    const { config } = await loadConfig({
      cwd: dir,
      file: 'production.js',
      env: { BROKER_API_KEYS: 'k'.repeat(32), BROKER_STORE_KEYS: 's'.repeat(32) },
    })
    expect(config).toMatchObject({ host: 'broker.example.com', listen: '0.0.0.0', store: { driver: 'redis' } })
    expect(config.callbacks.allow).toEqual(['https://app.example.com/oauth/'])
  })
})
