import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { loadPluginModule, phaseMethod } from './loader.js'

const dir = mkdtempSync(join(tmpdir(), 'pdk-loader-'))

describe('plugin loader', () => {
  it('loads CommonJS modules', async () => {
    mkdirSync(join(dir, 'cjs'))
    writeFileSync(join(dir, 'cjs/package.json'), '{"type":"commonjs"}')
    writeFileSync(
      join(dir, 'cjs/index.js'),
      "class P { access() {} }\nmodule.exports = { Plugin: P, Schema: [], Version: '1.0.0', Priority: 5 }",
    )
    const mod = await loadPluginModule(join(dir, 'cjs/index.js'))
    expect(mod.Version).toBe('1.0.0')
    expect(mod.Priority).toBe(5)
    expect(phaseMethod(new mod.Plugin({}), 'access')).toBeTypeOf('function')
  })

  it('loads ESM modules', async () => {
    writeFileSync(join(dir, 'esm.mjs'), "export class Plugin { headerFilter() {} }\nexport const Version = '2.0.0'")
    const mod = await loadPluginModule(join(dir, 'esm.mjs'))
    expect(mod.Version).toBe('2.0.0')
    expect(phaseMethod(new mod.Plugin({}), 'header_filter')).toBeTypeOf('function')
    expect(phaseMethod(new mod.Plugin({}), 'access')).toBeUndefined()
  })

  it('loads TypeScript modules directly', async () => {
    writeFileSync(
      join(dir, 'p.ts'),
      "export class Plugin { constructor(readonly config: { n: number }) {} access(): number { return this.config.n } }\nexport const Version: string = '3.0.0'",
    )
    const mod = await loadPluginModule(join(dir, 'p.ts'))
    expect(mod.Version).toBe('3.0.0')
    expect(new mod.Plugin({ n: 7 }).access).toBeTypeOf('function')
  })

  it('refuses modules without a Plugin class', async () => {
    writeFileSync(join(dir, 'none.mjs'), 'export const Version = "1"')
    await expect(loadPluginModule(join(dir, 'none.mjs'))).rejects.toThrow('does not export a Plugin class')
  })
})
