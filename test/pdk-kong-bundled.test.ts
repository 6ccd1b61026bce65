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
// the plugins' spec/03-plugins tests; KONG_SRC and LUA_MULTIPART in them are placeholders.
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

describe.skipIf(why !== undefined)(`Kong's bundled plugins unchanged${why ? ` (skipped: ${why})` : ''}`, () => {
  const src = join(root, 'test/kong-bundled')
  for (const name of readdirSync(src).filter((f) => f.endsWith('.json'))) {
    it(name, () => {
      const text = readFileSync(join(src, name), 'utf8')
        .replaceAll('KONG_SRC', kongSrc ?? '')
        .replaceAll('LUA_MULTIPART', multipart ?? '')
      writeFileSync(join(dir, name), text)
      const r = spawnSync(process.execPath, [join(root, 'bin/run.js'), 'pdk', 'run', join(dir, name)], {
        encoding: 'utf8',
        timeout: 60_000,
      })
      expect(r.stdout + r.stderr).toContain('1 passed, 0 failed')
      expect(r.status).toBe(0)
    })
  }
})
