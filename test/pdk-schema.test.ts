import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { describe, expect, it } from 'vitest'
import { ROOT, runCli } from './helpers/broker.js'

// `broker pdk schema`: where a fixture's "$schema" can point, in whatever copy of broker runs
// (test/pack.test.ts checks the same in an installed copy).
const SCHEMA = join(ROOT, 'pdk', 'fixture', 'fixture.schema.json')

describe('broker pdk schema', () => {
  it('prints the absolute path of the fixture schema, and nothing else', async () => {
    const { code, stdout, stderr } = await runCli(['pdk', 'schema'], { cwd: tmpdir() })
    expect(stderr).toBe('')
    expect(code).toBe(0)
    expect(stdout).toBe(`${SCHEMA}\n`)
  })

  it('--json gives the path, its file: URL and the schema $id; --print the schema itself', async () => {
    const json = await runCli(['pdk', 'schema', '--json'])
    expect(JSON.parse(json.stdout)).toEqual({
      path: SCHEMA,
      url: pathToFileURL(SCHEMA).href,
      id: 'https://broker.dev/schemas/pdk-fixture.json',
    })
    const print = await runCli(['pdk', 'schema', '--print'])
    expect(print.code).toBe(0)
    expect(JSON.parse(print.stdout)).toEqual(JSON.parse(readFileSync(SCHEMA, 'utf8')))
  })

  it('a fixture anywhere whose "$schema" is that URL runs', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'broker-schema-'))
    const fixture = {
      $schema: pathToFileURL(SCHEMA).href,
      name: 'points at the installed schema',
      request: { method: 'GET', url: 'http://example.com/' },
      plugins: [{ name: 'noop', phases: { access: [{ call: 'request.get_method', returns: ['GET'] }] } }],
    }
    writeFileSync(join(dir, 'f.json'), JSON.stringify(fixture))
    const { code, stdout } = await runCli(['pdk', 'run', join(dir, 'f.json')])
    expect(stdout).toMatch(/1 passed, 0 failed/)
    expect(code).toBe(0)
  })

  it('every shipped fixture whose "$schema" is a relative path reaches the schema', () => {
    const files = readdirSync(join(ROOT, 'fixtures'), { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.json'))
      .map((f) => join(ROOT, 'fixtures', f))
    const stale = files.filter((file) => {
      const schema = /^\s*"\$schema":\s*"(\.[^"]*)"/m.exec(readFileSync(file, 'utf8'))?.[1]
      return schema !== undefined && resolve(dirname(file), schema) !== SCHEMA
    })
    expect(files.length).toBeGreaterThan(400)
    expect(stale, 'fixtures whose "$schema" points where the schema is not').toEqual([])
  })
})
