import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { FRESH, PEERS } from '../vitest.config.js'

// `npm run test:quick` runs the unit projects alone and promises them no Redis, no child process and no
// browser: a unit test that starts one belongs in vitest.config.ts's PEERS (the peers project), which
// this test holds equal to what the unit tests import.

const root = join(import.meta.dirname, '..')

function unitTests(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name)
    if (e.isDirectory()) return e.name === 'node_modules' ? [] : unitTests(path)
    return /\.test\.tsx?$/.test(e.name) ? [path] : []
  })
}

// A real Redis (the helper, or ioredis itself rather than its types), a process, a browser, a terminal, a keychain.
const PEER =
  /from '[./]*test\/helpers\/(redis|redis-peer|redis-topologies|broker|cli|browser|tmux|keyring)\.js'|^import (?!type)[^\n]*from 'ioredis'|from 'node:(child_process|cluster)'|puppeteer/m

describe('the test projects', () => {
  it("PEERS names exactly the unit tests that start a peer (test:quick's promise)", () => {
    const starting = ['commands', 'src', 'flows', 'pdk', 'util']
      .flatMap(unitTests)
      .filter((file) => PEER.test(readFileSync(join(root, file), 'utf8')))
    expect([...PEERS].sort()).toEqual(starting.sort())
  })

  // The unit and e2e projects share modules between files: a vi.mock there would find its module already imported.
  it('every test that mocks a module is in a FRESH folder', () => {
    const folders = FRESH.map((glob) => glob.slice(0, glob.indexOf('**')))
    const mocking = ['commands', 'src', 'flows', 'pdk', 'util', 'test']
      .flatMap(unitTests)
      .filter((file) => /\bvi\.(do)?mock\(/.test(readFileSync(join(root, file), 'utf8')))
    expect(mocking.length).toBeGreaterThan(0)
    expect(mocking.filter((file) => !folders.some((f) => file.startsWith(f)))).toEqual([])
  })
})
