import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { LIB_DIR } from '../modules.js'
import { OPS } from './index.js'

// The Lua boundary by name: broker's Lua modules call `__host("<op>", ...)` (often through a local `H`), and a
// name the host does not have fails only when that line runs. Both lists, held equal.
const luaFiles = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? luaFiles(join(dir, e.name)) : e.name.endsWith('.lua') ? [join(dir, e.name)] : [],
  )
const called = new Map<string, string>()
for (const file of luaFiles(LIB_DIR)) {
  const text = readFileSync(file, 'utf8')
  for (const m of text.matchAll(/(?:\bH|__host)\(\s*"([a-z0-9_]+)"|pcall\(\s*(?:H|__host)\s*,\s*"([a-z0-9_]+)"/g))
    called.set(m[1] ?? m[2]!, file.slice(LIB_DIR.length + 1))
}

describe('the host operations Lua calls', () => {
  it('exist, every one of them', () => {
    expect([...called].filter(([op]) => !Object.hasOwn(OPS, op)).map(([op, file]) => `${op} (${file})`)).toEqual([])
  })

  it('are all called from some Lua module (none left behind)', () => {
    expect(Object.keys(OPS).filter((op) => !called.has(op))).toEqual([])
  })
})
