import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { BrokerError } from '../../errors/index.js'
import { PluginRegistry } from './plugins.js'

// What Node says of a broken plugin is test/syntax-errors.test.ts's (spawned: the test runner loads
// modules its own way); here, what the registry does with the failure.
describe('a flow plugin that fails to load', () => {
  it('fails every later request alike without loading it again', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'broker-flows-'))
    writeFileSync(join(dir, 'broken_2.mjs'), 'export default {\n  start() {\n    oops oops\n  },\n}\n')
    const registry = new PluginRegistry(dir)
    const first = await registry.get('broken_2').catch((e: unknown) => e)
    expect(first).toBeInstanceOf(BrokerError)
    expect((first as BrokerError).code).toBe('FLOW_PLUGIN_INVALID')
    // The same error, not a second load (and no second look for the syntax error's place).
    expect(await registry.get('broken_2').catch((e: unknown) => e)).toBe(first)
    expect(registry.loaded('broken_2')).toBeUndefined()
  })
})

// A worker loads no flow plugin until a request names one (its idle memory, `npm run bench`).
describe('a built-in flow plugin', () => {
  it('is loaded by the first request that names it, once', async () => {
    const registry = new PluginRegistry()
    expect(registry.loaded('oauth_2_3-legged')).toBeUndefined()
    const [a, b] = await Promise.all([registry.get('oauth_2_3-legged'), registry.get('oauth_2_3-legged')])
    expect(typeof a.start).toBe('function')
    expect(b).toBe(a)
    expect(registry.loaded('oauth_2_3-legged')).toBe(a)
    expect(registry.names().filter((n) => n === 'oauth_2_3-legged')).toHaveLength(1)
    expect(registry.names()).toContain('oauth_device_2')
  })
})
