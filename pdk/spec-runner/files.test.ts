import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { findSpecFiles, luaPattern, readBustedFile, SpecUsageError } from './files.js'

function root(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'specfiles-'))
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true })
    writeFileSync(join(dir, name), text)
  }
  return dir
}

describe('spec files and .busted', () => {
  it('takes *_spec.lua files under a folder in name order; named files as they are', () => {
    const dir = root({
      'spec/b/02_spec.lua': '',
      'spec/a_spec.lua': '',
      'spec/helpers.lua': '',
      'spec/notes_spec.txt': '',
      'other/x.lua': '',
    })
    expect(findSpecFiles(dir, ['spec'], '_spec')).toEqual(['spec/a_spec.lua', 'spec/b/02_spec.lua'])
    expect(findSpecFiles(dir, ['other/x.lua', 'spec/a_spec.lua'], '_spec')).toEqual(['other/x.lua', 'spec/a_spec.lua'])
    expect(findSpecFiles(dir, ['spec'], '^0%d')).toEqual(['spec/b/02_spec.lua'])
  })

  it('a missing path and a folder without specs are usage errors', () => {
    const dir = root({ 'spec/x.lua': '' })
    expect(() => findSpecFiles(dir, ['nope'], '_spec')).toThrow(SpecUsageError)
    expect(() => findSpecFiles(dir, ['spec'], '_spec')).toThrow(/No spec file in spec/)
  })

  it('Lua patterns as file patterns: %d, %., %a, and - as the lazy repeat', () => {
    expect(luaPattern('^%d%d%-x%.lua$').test('01-x.lua')).toBe(true)
    expect(luaPattern('%a+_spec').test('9_spec')).toBe(false)
  })

  it(".busted's default task (or the one --run names), lists given as strings or tables", async () => {
    const dir = root({
      '.busted': `return {
        default = { verbose = true, output = "gtest", tags = "a,b", ROOT = { "spec/unit" } },
        ci = { ["exclude-tags"] = { "flaky" }, lazy = true },
      }`,
    })
    expect(await readBustedFile(dir)).toMatchObject({ output: 'gtest', tags: ['a', 'b'], ROOT: ['spec/unit'] })
    expect(await readBustedFile(dir, 'ci')).toMatchObject({ 'exclude-tags': ['flaky'], lazy: true })
    await expect(readBustedFile(dir, 'nope')).rejects.toThrow(/no task "nope"/)
    expect(await readBustedFile(root({}))).toEqual({})
    await expect(readBustedFile(root({ '.busted': 'return {' }))).rejects.toThrow(/\.busted does not run/)
  })
})
