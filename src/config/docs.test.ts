import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { configTable, TABLE_END, TABLE_START, withConfigTable } from './docs.js'
import { CONFIG_KEYS } from './keys.js'

const CONFIG_DOC = resolve(import.meta.dirname, '..', '..', 'docs', 'configuration.md')

describe("docs/configuration.md's table", () => {
  // On a failure, `npx vitest run src/config/docs.test.ts -u` writes the table from the schema.
  it('is the one the schema writes', async () => {
    await expect(withConfigTable(readFileSync(CONFIG_DOC, 'utf8'))).toMatchFileSnapshot(CONFIG_DOC)
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
