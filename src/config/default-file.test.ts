import { resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { CONFIG_KEYS } from './keys.js'
import { readConfigFile } from './load.js'
import { configSchema } from './schema.js'

const FILE = resolve(import.meta.dirname, '..', '..', 'config', 'default.js')

const at = (obj: unknown, path: readonly string[]): unknown =>
  path.reduce<unknown>(
    (cur, p) => (cur && typeof cur === 'object' ? (cur as Record<string, unknown>)[p] : undefined),
    obj,
  )

describe('config/default.js', () => {
  it("gives the schema's defaults, no more and no less", async () => {
    const file = await readConfigFile(FILE)
    expect(configSchema.parse(file)).toEqual(configSchema.parse({}))
  })

  it('writes out every key the schema gives a value by default', async () => {
    const file = await readConfigFile(FILE)
    const defaults = configSchema.parse({})
    const missing = CONFIG_KEYS.filter((k) => at(defaults, k.path) !== undefined && at(file, k.path) === undefined).map(
      (k) => k.key,
    )
    expect(missing).toEqual([])
  })
})
