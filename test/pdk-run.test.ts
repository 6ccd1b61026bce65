import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { runCliInProcess } from './helpers/cli-in-process.js'

// End to end: `broker pdk run` as a user runs it, from the build (`npm test` builds first).
const root = resolve(import.meta.dirname, '..')
// In this process (test/helpers/cli-in-process.ts): exit codes and output as a spawn gives them, without
// starting Node and oclif once per run.
const pdk = (...args: string[]) => runCliInProcess(['pdk', 'run', ...args], { cwd: root })

const dir = mkdtempSync(join(tmpdir(), 'pdk-e2e-'))
const fixture = (name: string, body: unknown) => {
  const file = join(dir, name)
  writeFileSync(file, typeof body === 'string' ? body : JSON.stringify(body))
  return file
}

const failing = fixture('failing.json', {
  name: 'host check that fails',
  request: { url: 'http://example.com/' },
  plugins: [{ name: 'checker', phases: { access: [{ call: 'request.get_host', returns: ['other.example'] }] } }],
  expect: { status: 418 },
})
const passing = fixture('passing.json', {
  name: 'host check that passes',
  request: { url: 'http://example.com/' },
  plugins: [
    {
      name: 'checker',
      phases: {
        access: [
          { call: 'request.get_host', returns: ['example.com'] },
          { call: 'response.exit', args: [200, { ok: true }] },
        ],
      },
    },
  ],
  expect: { status: 200, body: { ok: true }, source: 'exit' },
})

describe('broker pdk run', () => {
  it('passes every shipped fixture and ends with the summary line', async () => {
    const shipped = readdirSync(join(root, 'fixtures/pdk')).filter((f) => f.endsWith('.json')).length
    const r = await pdk('fixtures/pdk')
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    expect(r.stdout.trimEnd().split('\n').at(-1)).toBe(`${shipped} passed, 0 failed`)
  })

  it('runs a plugin written for kong-js-pdk unchanged', async () => {
    const r = await pdk('fixtures/pdk/js-hello.json')
    expect(r.code).toBe(0)
    expect(r.stdout).toContain('request.get_header("host") → "example.com"')
    expect(r.stdout).toContain('x-hello-from-javascript: Javascript says bonjour to example.com')
  })

  it('prints the phase trace and final response', async () => {
    const r = await pdk(passing)
    expect(r.code).toBe(0)
    expect(r.stdout).toContain('PASS host check that passes')
    expect(r.stdout).toContain('  access · checker')
    expect(r.stdout).toContain('    response.exit(200, {"ok":true}) → nothing')
    expect(r.stdout).toContain('  response 200 (source: exit)')
    expect(r.stdout).toContain('    content-type: application/json; charset=utf-8')
    expect(r.stdout.trimEnd().split('\n').at(-1)).toBe('1 passed, 0 failed')
  })

  it('exits 1 and shows expected vs actual when an expectation fails', async () => {
    const r = await pdk(passing, failing)
    expect(r.code).toBe(1)
    expect(r.stdout).toContain('FAIL host check that fails')
    expect(r.stdout).toContain(
      '  ✗ $.plugins[0].phases.access[0].returns\n      expected: ["other.example"]\n      actual:   ["example.com"]',
    )
    expect(r.stdout).toContain('  ✗ $.expect.status\n      expected: 418\n      actual:   200')
    expect(r.stdout.trimEnd().split('\n').at(-1)).toBe('1 passed, 1 failed')
  })

  it('exits 2 naming the file and JSON path of an invalid field', async () => {
    const bad = fixture('bad.json', {
      name: 'x',
      request: { url: 'http://h/' },
      plugins: [{ name: 'p', phases: { access: [{ call: 'request.get_host', args: 'host' }] } }],
    })
    const r = await pdk(passing, bad)
    expect(r.code).toBe(2)
    // the fixture that cannot run hides none of the others: they replay, then the run stops naming it
    expect(r.stdout.trimEnd().split('\n').at(-1)).toBe('1 passed, 0 failed')
    expect(r.stderr).toContain(`Error FIXTURE_INVALID: ${bad}: $.plugins[0].phases.access[0].args: must be array`)
  })

  it('reports every problem of a fixture in one run, a misspelt field with the closest known one', async () => {
    const typos = fixture('typos.json', {
      name: 'x',
      request: { url: 'http://h/' },
      plugins: [{ name: 'p', phases: { acess: [] } }],
      expect: { upstream_requst: { headers: {} } },
    })
    const r = await pdk(typos)
    expect(r.code).toBe(2)
    const lines = r.stderr.split('\n')
    expect(lines[0]).toBe(
      `Error FIXTURE_INVALID: ${typos}: $.plugins[0].phases.acess: is not a valid name here (must be one of "init_worker", "certificate", "rewrite", "access", "balancer", "response", "header_filter", "body_filter", "timer", "log", "preread", "admin_api"); did you mean access?`,
    )
    expect(lines[1]).toBe(`${typos}: $.expect.upstream_requst: is not a known field (did you mean upstream_request?)`)
  })

  // An installed copy run anywhere: the README's fixtures are the package's, not the current folder's.
  describe('outside a checkout', () => {
    const elsewhere = mkdtempSync(join(tmpdir(), 'pdk-elsewhere-'))
    const run = (...args: string[]) => runCliInProcess(['pdk', 'run', ...args], { cwd: elsewhere })

    it("runs a shipped fixture by name, and the README's fixtures/pdk/… paths", async () => {
      for (const args of [['js-hello'], ['js-hello.json'], ['fixtures/pdk/js-hello.json'], ['lua-hello', 'js-hello']]) {
        const r = await run(...args)
        expect(r.stderr, args.join(' ')).toBe('')
        expect(r.stdout.trimEnd().split('\n').at(-1)).toBe(`${args.length} passed, 0 failed`)
        expect(r.code).toBe(0)
      }
    })

    it('names the closest shipped fixture and where they are for a name that is none of them', async () => {
      const r = await run('js-helo')
      expect(r.code).toBe(2)
      expect(r.stderr).toContain(
        `Error FIXTURE_INVALID: "js-helo" is neither a file here nor a fixture shipped with broker (${join(root, 'fixtures', 'pdk')}). Did you mean js-hello?`,
      )
      expect(r.stderr).toMatch(/→ .*`broker pdk run js-hello`/)
      expect(r.stderr).not.toMatch(/the shipped fixtures\/pdk/)
    })
  })

  it('exits 2 for an unreadable fixture', async () => {
    const r = await pdk(join(dir, 'nope.json'))
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('nope.json: $: cannot be read (ENOENT)')
    const notJson = await pdk(fixture('garbage.json', '{"name": '))
    expect(notJson.code).toBe(2)
    expect(notJson.stderr).toContain('garbage.json: $: is not valid JSON')
  })

  it('names the file, line and column of a syntax error in a plugin module, ESM or CommonJS', async () => {
    const plugin = (name: string, text: string) => {
      writeFileSync(join(dir, name), text)
      return fixture(`uses-${name}.json`, {
        name: `loads ${name}`,
        request: { url: 'http://example.com/' },
        plugins: [{ name: 'broken', module: `./${name}` }],
      })
    }
    const esm = plugin('broken.mjs', 'export class Plugin {\n  access(kong) {\n    oops oops\n  }\n}\n')
    const cjs = plugin(
      'broken.cjs',
      'class Plugin {\n  access(kong) {\n    oops oops\n  }\n}\nmodule.exports = { Plugin }\n',
    )
    for (const [fixtureFile, module] of [
      [esm, 'broken.mjs'],
      [cjs, 'broken.cjs'],
    ]) {
      const r = await pdk(fixtureFile!)
      expect(r.code).toBe(2)
      expect(r.stderr).toContain(`$.plugins[0].module: ${join(dir, module!)}:3:10: Unexpected identifier 'oops'`)
    }
  })

  it('shows a call that threw as the fixture expected as expected, not as ✗', async () => {
    const r = await pdk(join(root, 'fixtures/pdk/log-serialize.json'))
    expect(r.code).toBe(0)
    expect(r.stdout).toContain(`log.serialize() ✓ throws as expected: function cannot be called in access phase`)
    expect(r.stdout).not.toMatch(/✗/)
  })

  it('exits 2 for a folder without fixtures or a pattern that matched none, never 0 passed', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'pdk-empty-'))
    for (const path of [empty, join(dir, '*.jsn')]) {
      const r = await pdk(path)
      expect(r.code, path).toBe(2)
      expect(r.stderr).toContain(`No fixture found in ${path}`)
      expect(r.stdout).not.toMatch(/passed/)
    }
  })

  it('--json prints exactly the report shape', async () => {
    const r = await pdk(failing, '--json')
    expect(r.code).toBe(1)
    const out = JSON.parse(r.stdout) as { fixtures: Array<Record<string, unknown>> }
    expect(Object.keys(out)).toEqual(['fixtures'])
    const [f] = out.fixtures
    expect(Object.keys(f!)).toEqual(['name', 'passed', 'response', 'upstream_request', 'phases', 'logs', 'failures'])
    expect(f).toMatchObject({
      name: 'host check that fails',
      passed: false,
      response: { status: 200, headers: {}, body: '', source: 'service' },
      upstream_request: { method: 'GET', path: '/', query: '', headers: { host: 'example.com' }, body: '' },
      phases: [
        {
          phase: 'access',
          plugin: 'checker',
          calls: [{ call: 'request.get_host', args: [], returns: ['example.com'] }],
        },
      ],
      logs: [],
      failures: [
        { path: '$.plugins[0].phases.access[0].returns', expected: ['other.example'], actual: ['example.com'] },
        { path: '$.expect.status', expected: 418, actual: 200 },
      ],
    })
  })

  it("follows Kong's phases; --strict also holds the reference's, naming both lists", async () => {
    const kongOnly = fixture('kong-only.json', {
      name: 'exit in the response phase',
      request: { url: 'http://example.com/' },
      plugins: [{ name: 'late', phases: { response: [{ call: 'response.exit', args: [418, 'teapot'] }] } }],
      expect: { status: 418, body: 'teapot' },
    })
    expect((await pdk(kongOnly)).code).toBe(0)
    const r = await pdk(kongOnly, '--strict')
    expect(r.code).toBe(1)
    expect(r.stdout).toContain(
      "function cannot be called in response phase under --strict (the reference lists only: rewrite, access, header_filter, admin_api; Kong's code allows: rewrite, access, balancer, response, header_filter, error, admin_api)",
    )
    // the unstated plugin error is what fails it, wherever it happened
    expect(r.stdout).toContain('  ✗ $.logs[0]')
  })

  it("passes Kong's own t/01-pdk cases", async () => {
    const kong = readdirSync(join(root, 'fixtures/pdk/kong')).filter((f) => f.endsWith('.json')).length
    const r = await pdk('fixtures/pdk/kong')
    expect(r.code).toBe(0)
    expect(r.stdout.trimEnd().split('\n').at(-1)).toBe(`${kong} passed, 0 failed`)
  })

  it('--json reports an invalid fixture as an error object', async () => {
    const r = await pdk(join(dir, 'nope.json'), '--json')
    expect(r.code).toBe(2)
    expect(JSON.parse(r.stdout)).toMatchObject({ error: { code: 'FIXTURE_INVALID', path: '$' } })
  })
})
