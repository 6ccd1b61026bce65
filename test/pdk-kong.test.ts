import { readdirSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { loadFixture } from '../pdk/fixture/index.js'
import { runScenario } from '../pdk/runner/index.js'
import { preparePlugins } from '../pdk/runner/plugins.js'

// Kong's own PDK test cases (t/01-pdk/*.t of Kong/kong), translated into fixtures named after their
// source file: each must pass, so a change that moves the kit away from Kong's behaviour fails here.
const dir = resolve(import.meta.dirname, '../fixtures/pdk/kong')
const files = readdirSync(dir)
  .filter((n) => n.endsWith('.json'))
  .sort()

describe("Kong's t/01-pdk cases", () => {
  it('are all there, named after their Kong source file', () => {
    expect(files.length).toBeGreaterThan(100)
    for (const n of files) expect(n).toMatch(/^\d\d-[\w-]+(\.[\w-]+)?\.json$/)
  })

  it.each(files)('%s passes', async (name) => {
    const loaded = loadFixture(join(dir, name))
    const result = await runScenario(loaded, await preparePlugins(loaded))
    expect(result.failures).toEqual([])
    expect(result.passed).toBe(true)
  })
})
