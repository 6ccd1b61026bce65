import { spawnSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'

// Kong's bundled plugins, unchanged from a checkout of Kong's source, replayed by `broker pdk run`.
// Opt-in: Kong's code never enters this repository, so set KONG_SRC to a checkout (the folder
// holding kong/plugins, e.g. `git archive 3.9.3` of Kong/kong) and LUA_MULTIPART to Kong's
// lua-multipart `src/` folder (request-transformer requires it); Penlight must be installed
// (`apt-get install lua-penlight`). The scenarios in test/kong-bundled/ are ours, written from
// the plugins' spec/03-plugins tests; KONG_SRC and LUA_MULTIPART in them are placeholders, as is TEST_PLUGINS (plugins
// of ours the scenarios use beside Kong's, in test/kong-bundled/plugins). Those in
// refused/ hold configs Kong refuses: the run must stop naming the field with Kong's message (REFUSED).
const root = resolve(import.meta.dirname, '..')
const kongSrc = process.env.KONG_SRC
const multipart = process.env.LUA_MULTIPART
const why = !kongSrc
  ? 'KONG_SRC is not set (a checkout of Kong/kong, e.g. 3.9.3)'
  : !multipart
    ? "LUA_MULTIPART is not set (Kong's lua-multipart src/ folder)"
    : undefined
const dir = mkdtempSync(join(tmpdir(), 'broker-kong-bundled-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** Replays one scenario of test/kong-bundled/ with the placeholders filled in. */
function replay(name: string) {
  const text = readFileSync(join(root, 'test/kong-bundled', name), 'utf8')
    .replaceAll('KONG_SRC', kongSrc ?? '')
    .replaceAll('LUA_MULTIPART', multipart ?? '')
    .replaceAll('TEST_PLUGINS', join(root, 'test/kong-bundled/plugins'))
  const file = join(dir, name.replaceAll('/', '-'))
  writeFileSync(file, text)
  return spawnSync(process.execPath, [join(root, 'bin/run.js'), 'pdk', 'run', file], {
    encoding: 'utf8',
    timeout: 60_000,
  })
}

// Configs Kong's Admin API refuses, each with the field and Kong's message the run must stop with (exit 2).
const REFUSED: Record<string, string> = {
  'http-log-bad-endpoint.json': '$.plugins[0].config.http_endpoint: missing host in url',
  'http-log-bad-queue.json': '$.plugins[0].config.queue.max_batch_size: value should be between 1 and 1000000',
  'http-log-userinfo-and-authorization.json':
    "$.plugins[0].config: specifying both an 'Authorization' header and user info in 'http_endpoint' is not allowed",
}

describe.skipIf(why !== undefined)(`Kong's bundled plugins unchanged${why ? ` (skipped: ${why})` : ''}`, () => {
  for (const name of readdirSync(join(root, 'test/kong-bundled')).filter((f) => f.endsWith('.json'))) {
    it(name, () => {
      const r = replay(name)
      expect(r.stdout + r.stderr).toContain('1 passed, 0 failed')
      expect(r.status).toBe(0)
    })
  }
  for (const name of readdirSync(join(root, 'test/kong-bundled/refused')).filter((f) => f.endsWith('.json'))) {
    it(`refused/${name}`, () => {
      const message = REFUSED[name]
      expect(message, `${name} has no message in REFUSED`).toBeDefined()
      const r = replay(`refused/${name}`)
      expect(r.stderr).toContain('PDK_PLUGIN_CONFIG_INVALID')
      expect(r.stderr).toContain(message!)
      expect(r.status).toBe(2)
    })
  }
})
