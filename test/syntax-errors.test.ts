import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type BrokerProcess, runCli, startBroker } from './helpers/broker.js'

// A JavaScript syntax error in a config file or a flow plugin, as Node itself loads them (spawned:
// the test runner's own loader would parse these files first, with other messages): the CLI names
// the line and column; an HTTP answer too, but never a path or a file name.

const dir = mkdtempSync(join(tmpdir(), 'broker-syntax-'))
const write = (name: string, text: string) => {
  writeFileSync(join(dir, name), text)
  return join(dir, name)
}

describe('a config file with a syntax error', () => {
  it.each([
    ['c.js', 'export default {\n  port: 4000,\n  store: { driver: "memory" },\n  oops oops\n}\n', 4],
    ['c.mjs', 'export default {\n  port: 4000,\n  oops oops\n}\n', 3],
    ['c.cjs', 'module.exports = {\n  port: 4000,\n  oops oops\n}\n', 3],
  ])('broker serve -c %s exits 2 naming the file, line and column', async (name, text, line) => {
    const file = write(name, text)
    const { code, stderr } = await runCli(['serve', '-c', file, '--port', '0'])
    expect(code).toBe(2)
    expect(stderr).toContain(
      `Error CONFIG_INVALID: Cannot load the config file ${file}: Unexpected identifier 'oops' at line ${line}, column 8`,
    )
    expect(stderr).not.toMatch(/\n\s+at /)
  })
})

describe('a config file in the other module format than its package.json says', () => {
  it('`export default` under "type": "commonjs" loads without Node\'s "To load an ES module" warning', async () => {
    const folder = mkdtempSync(join(dir, 'cjs-'))
    writeFileSync(join(folder, 'package.json'), '{ "type": "commonjs" }')
    writeFileSync(join(folder, 'broker.config.js'), 'export default { port: "not a port" }\n')
    // A value the schema refuses: the file was read, and serve stops before it listens.
    const { code, stderr } = await runCli(['serve', '-c', 'broker.config.js'], { cwd: folder })
    expect(stderr).toMatch(/^Error CONFIG_INVALID: [\s\S]*\bport \(.*broker\.config\.js\): Expected number/)
    expect(stderr).not.toMatch(/To load an ES module|Warning/)
    expect(code).toBe(2)
  })
})

describe('a flow plugin with a syntax error', () => {
  let broker: BrokerProcess
  beforeAll(async () => {
    write('badesm_2.mjs', 'export default {\n  start() {\n    oops oops\n  },\n}\n')
    write('badcjs_2.cjs', 'module.exports = {\n  start() {\n    oops oops\n  },\n}\n')
    broker = await startBroker({ args: ['--store', 'memory', '--plugins-dir', dir] })
  })
  afterAll(async () => {
    await broker?.stop()
  })

  it.each(['badesm', 'badcjs'])('%s: FLOW_PLUGIN_INVALID with the line and column, no path', async (type) => {
    const res = await fetch(`${broker.url}/store`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ auth_type: type, auth_version: '2' }),
    })
    expect(res.status).toBe(500)
    const text = await res.text()
    expect(JSON.parse(text)).toMatchObject({
      code: 'FLOW_PLUGIN_INVALID',
      plugin: `${type}_2`,
      message: `The flow plugin "${type}_2" failed to load: Unexpected identifier 'oops' at line 3, column 10`,
    })
    expect(text).not.toMatch(/broker-syntax|\/tmp|\.mjs|\.cjs|file:/)
  })
})
