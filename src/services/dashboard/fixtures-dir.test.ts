import { mkdirSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { fixturesDir } from './fixtures-dir.js'

describe('fixturesDir', () => {
  const root = '/opt/node_modules/oauth-broker'

  it('takes --fixtures as given', () => {
    expect(fixturesDir('mine', tmpdir(), root)).toBe('mine')
  })

  it('lists fixtures/pdk under the current folder when there is one (a checkout)', () => {
    const cwd = mkdtempSync(join(tmpdir(), 'broker-fx-'))
    mkdirSync(join(cwd, 'fixtures', 'pdk'), { recursive: true })
    expect(fixturesDir(undefined, cwd, root)).toBe('fixtures/pdk')
  })

  it("falls back to the package's shipped fixtures anywhere else (an installed copy)", () => {
    const cwd = mkdtempSync(join(tmpdir(), 'broker-fx-'))
    expect(fixturesDir(undefined, cwd, root)).toBe(join(root, 'fixtures', 'pdk'))
  })
})
