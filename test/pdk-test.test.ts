import { cpSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ROOT, runCli } from './helpers/broker.js'

// `broker pdk test` as a plugin author runs it, from the plugin's root: fixtures/pdk-test/greeter,
// a plugin of ours with busted specs in Kong's style (spec/) and a folder of specs that fail on
// purpose (spec-failing/). Needs a build (npm test builds first).
const GREETER = join(ROOT, 'fixtures', 'pdk-test', 'greeter')

/** A copy of the greeter plugin root in a temp folder, with a .busted file when given. */
function copyRoot(busted?: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'pdk-test-'))
  cpSync(GREETER, dir, { recursive: true })
  if (busted !== undefined) writeFileSync(join(dir, '.busted'), busted)
  return dir
}

interface Entry {
  name: string
  message: string | null
  trace: { short_src: string; currentline: number }
}
interface Report {
  successes: Entry[]
  failures: Entry[]
  errors: Entry[]
  pendings: Entry[]
  duration: number
}

describe('broker pdk test', () => {
  it("runs the plugin's spec/ folder by default: schema, proxied access and http_mock specs pass, exit 0", async () => {
    const { code, stdout, stderr } = await runCli(['pdk', 'test'], { cwd: GREETER })
    expect(stderr).toBe('')
    // 20-deploys runs its 2 tests in the traditional deploy and in the three hybrid ones (spec.hybrid)
    expect(stdout).toMatch(/^●{18}\n18 successes \/ 0 failures \/ 0 errors \/ 0 pending : [\d.]+ seconds\n/)
    expect(code).toBe(0)
  })

  it("-o json prints busted's report shape; a failure or an error makes the exit status 1", async () => {
    const { code, stdout } = await runCli(['pdk', 'test', 'spec-failing', '-o', 'json'], { cwd: GREETER })
    expect(code).toBe(1)
    const report = JSON.parse(stdout) as Report
    expect(report.successes.map((e) => e.name)).toEqual(['broken #demo passes'])
    expect(report.failures[0]!.message).toMatch(/^spec-failing\/broken_spec\.lua:6: Expected objects to be the same\./)
    expect(report.failures[0]!.trace).toMatchObject({ short_src: 'spec-failing/broken_spec.lua', currentline: 6 })
    expect(report.errors.map((e) => [e.name, e.message])).toEqual([
      ['broken #demo errors', 'spec-failing/broken_spec.lua:7: exploded'],
      [
        'broken #demo uses a helper broker does not have',
        'spec-failing/broken_spec.lua:8: spec.helpers.http_mock is not emulated by broker yet (docs/pdk-test.md lists what is)',
      ],
      [
        'broken #demo uses an Admin API endpoint broker does not have',
        "spec-failing/broken_spec.lua:9: spec.helpers.admin_client(): the Admin API's /upstreams (GET /upstreams) is not emulated by broker yet",
      ],
      [
        'broken #demo reads a log file broker does not keep',
        'spec-failing/broken_spec.lua:10: assert.logfile("elsewhere/error.log"): only the error.log of the Kong spec.helpers started (servroot/logs/error.log) is kept by broker; this file does not exist',
      ],
    ])
    expect(report.failures.map((e) => e.name)).toEqual(['broken #demo fails', 'broken #demo starts a data plane'])
    expect(report.failures[1]!.message).toContain(
      "a data plane (role 'data_plane') is emulated beside its control plane",
    )
    expect(report.pendings.map((e) => e.name)).toEqual(['broken #demo is pending'])
    // --json prints the same report
    const json = await runCli(['pdk', 'test', 'spec-failing', '--json'], { cwd: GREETER })
    expect(Object.keys(JSON.parse(json.stdout) as Report).sort()).toEqual([
      'duration',
      'errors',
      'failures',
      'pendings',
      'successes',
    ])
    expect(json.code).toBe(1)
  })

  it('-o TAP and -o gtest', async () => {
    const tap = await runCli(['pdk', 'test', 'spec-failing', '-o', 'TAP'], { cwd: GREETER })
    expect(tap.stdout.split('\n').filter((l) => /^(ok|not ok|1\.\.)/.test(l))).toEqual([
      '1..8',
      'ok 1 - broken #demo passes',
      'not ok 2 - broken #demo fails',
      'not ok 3 - broken #demo errors',
      'not ok 4 - broken #demo uses a helper broker does not have',
      'not ok 5 - broken #demo uses an Admin API endpoint broker does not have',
      'not ok 6 - broken #demo reads a log file broker does not keep',
      'not ok 7 - broken #demo starts a data plane',
      'ok 8 - # SKIP broken #demo is pending',
    ])
    const gtest = await runCli(['pdk', 'test', '-o', 'gtest'], { cwd: GREETER })
    expect(gtest.stdout).toContain('[----------] 3 tests from spec/greeter/01-schema_spec.lua')
    expect(gtest.stdout).toMatch(/\[==========\] 18 tests from 3 test files ran\./)
    expect(gtest.stdout).toContain('[  PASSED  ] 18 tests.')
    expect(gtest.stdout).toContain('#postgres #hybrid #rpc #rpc_sync')
    expect(gtest.code).toBe(0)
  })

  it('--tags, --exclude-tags and --filter select tests by their full names', async () => {
    const only = await runCli(['pdk', 'test', '-t', 'postgres', '--filter', '404', '-o', 'json'], { cwd: GREETER })
    expect((JSON.parse(only.stdout) as Report).successes.map((e) => e.name)).toEqual([
      "greeter: (access) [#postgres] no route matched is Kong's 404",
    ])
    const none = await runCli(['pdk', 'test', 'spec-failing', '--exclude-tags', 'demo', '-o', 'json'], { cwd: GREETER })
    expect(JSON.parse(none.stdout)).toMatchObject({ successes: [], failures: [], errors: [], pendings: [] })
    expect(none.code).toBe(0)
  })

  it('a repeatable flag before the paths takes one value: the path after it is still a path', async () => {
    const all = await runCli(['pdk', 'test', 'spec-failing', '-o', 'json'], { cwd: GREETER })
    const failing = (JSON.parse(all.stdout) as Report).failures.map((e) => e.name)
    expect(failing.length).toBeGreaterThan(0)
    for (const flag of ['--lua-path', '--filter']) {
      const r = await runCli(['pdk', 'test', flag, flag === '--filter' ? '.' : 'kong', 'spec-failing', '-o', 'json'], {
        cwd: GREETER,
      })
      expect((JSON.parse(r.stdout) as Report).failures.map((e) => e.name)).toEqual(failing)
    }
  })

  it("reads the .busted file's default task; the command line wins over it", async () => {
    const dir = copyRoot(
      'return { default = { ROOT = { "spec-failing" }, output = "TAP", ["exclude-tags"] = "nothing" } }',
    )
    const fromFile = await runCli(['pdk', 'test'], { cwd: dir })
    expect(fromFile.stdout.split('\n')[0]).toBe('1..8')
    expect(fromFile.code).toBe(1)
    const overridden = await runCli(['pdk', 'test', 'spec', '-o', 'json'], { cwd: dir })
    expect((JSON.parse(overridden.stdout) as Report).successes).toHaveLength(18)
    expect(overridden.code).toBe(0)
  })

  it('a path that does not exist, a folder without specs and a broken .busted are usage errors (exit 2)', async () => {
    const missing = await runCli(['pdk', 'test', 'spec/nope', '--json'], { cwd: GREETER })
    expect(missing.code).toBe(2)
    expect(JSON.parse(missing.stdout)).toMatchObject({ error: { code: 'PDK_SPEC_NOT_FOUND', path: 'spec/nope' } })
    const empty = await runCli(['pdk', 'test', 'kong'], { cwd: GREETER })
    expect(empty.code).toBe(2)
    expect(empty.stderr).toContain('Error PDK_SPEC_NOT_FOUND: No spec file in kong')
    const broken = await runCli(['pdk', 'test'], { cwd: copyRoot('return 42') })
    expect(broken.code).toBe(2)
    expect(broken.stderr).toContain('Error PDK_SPEC_CONFIG_INVALID: .busted must return a table of tasks')
  })

  it('--record writes a fixture per proxied request; broker pdk run replays them all to the same answers', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pdk-record-'))
    const recorded = await runCli(['pdk', 'test', '--record', dir], { cwd: GREETER })
    expect(recorded.code).toBe(0)
    const files = readdirSync(dir).filter((f) => f.endsWith('.json'))
    expect(recorded.stderr).toBe(`recorded ${files.length} fixtures in ${dir}\n`)
    expect(files.length).toBeGreaterThan(4)
    const replayed = await runCli(['pdk', 'run', dir])
    expect(replayed.stdout.trimEnd().split('\n').at(-1)).toBe(`${files.length} passed, 0 failed`)
    expect(replayed.code).toBe(0)
    // a recorded answer the replay does not give fails it
    const first = join(dir, files[0]!)
    const fixture = JSON.parse(readFileSync(first, 'utf8')) as { expect: { body: string } }
    writeFileSync(first, JSON.stringify({ ...fixture, expect: { ...fixture.expect, body: fixture.expect.body + ' ' } }))
    const differs = await runCli(['pdk', 'run', first])
    expect(differs.stdout).toContain('$.expect.body')
    expect(differs.code).toBe(1)
  })
})
