import { readdirSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { loadFixture } from '../pdk/fixture/index.js'
import { runtimeFor } from '../pdk/lua/plugin.js'
import type { LuaRuntime } from '../pdk/lua/runtime.js'
import { runScenario } from '../pdk/runner/index.js'
import { preparePlugins } from '../pdk/runner/plugins.js'

// Kong's own PDK cases (fixtures/pdk/kong, translated from t/01-pdk) replayed through the Lua face:
// each call of their scripts is made from Lua (`kong.request.get_header(...)`), its values come back
// as Lua gave them, and the same expectations hold as for the JS face.
const dir = resolve(import.meta.dirname, '../fixtures/pdk/kong')
const files = readdirSync(dir)
  .filter((n) => n.endsWith('.json'))
  .sort()

const runtimes: LuaRuntime[] = []
afterAll(() => runtimes.forEach((r) => r.close()))

describe("Kong's t/01-pdk cases through the Lua face", () => {
  it('are all there', () => expect(files.length).toBeGreaterThan(300))

  it.each(files)('%s passes', async (name) => {
    const loaded = loadFixture(join(dir, name))
    const lua = await runtimeFor(loaded, [])
    runtimes.push(lua)
    const plugins = await preparePlugins(loaded, {
      scriptsVia: (scene, path, args) => lua.callKit(scene.ctx, scene.kit, scene.record, path, args),
    })
    const result = await runScenario(loaded, plugins)
    expect(result.failures).toEqual([])
  })
})
