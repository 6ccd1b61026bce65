import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { LUA_DOC, luaDoc } from '../../../scripts/lua-doc.js'

describe("docs/lua-plugins.md's tables of modules and nginx variables", () => {
  it('are what scripts/lua-doc.ts writes from the manifest', () => {
    // On a failure: npm run docs:lua (node --import tsx scripts/lua-doc.ts)
    const current = readFileSync(LUA_DOC, 'utf8')
    expect(current).toBe(luaDoc(current))
  })
})
