import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'
import { OPS } from '../host/index.js'
import { VARIABLES } from '../host/vars.js'
import { LIB_DIR } from '../modules.js'
import { MACHINERY, MODULES, NGINX_VARIABLES, type LuaModule } from './index.js'

// The Lua boundary by name: broker's Lua calls `__host("<op>", ...)` (often through a local `H`), and a name the
// host does not have fails only when that line runs. The manifest says which module calls which operation; this
// holds the three (the manifest, the Lua files, the host) equal.
const luaFiles = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? luaFiles(join(dir, e.name)) : e.name.endsWith('.lua') ? [join(dir, e.name)] : [],
  )
const FILES = luaFiles(LIB_DIR).map((f) => relative(LIB_DIR, f).split('\\').join('/'))
const source = (file: string) => readFileSync(join(LIB_DIR, file), 'utf8')
/** The host operations a Lua file calls. */
const callsOf = (file: string): string[] => [
  ...new Set(
    [...source(file).matchAll(/(?:\bH|__host)\(\s*"([a-z0-9_]+)"|pcall\(\s*(?:H|__host)\s*,\s*"([a-z0-9_]+)"/g)].map(
      (m) => m[1] ?? m[2]!,
    ),
  ),
]
const sorted = (xs: Iterable<string>) => [...new Set(xs)].sort()

/** The file `require` finds for a module of broker's: `a/b.lua` or `a/b/init.lua`, under lib/ or lib/fallback/. */
function fileOf(m: LuaModule, under = m.status === 'fallback' ? 'fallback/' : ''): string | undefined {
  const rel = under + m.name.replace(/\./g, '/')
  return [`${rel}.lua`, `${rel}/init.lua`].find((f) => existsSync(join(LIB_DIR, f)))
}
const filesOf = (m: LuaModule): string[] => {
  const own = m.status === 'not emulated' ? undefined : fileOf(m)
  return [...(m.files ?? []), ...(own ? [own] : [])]
}

describe('the manifest of Lua modules', () => {
  it('names each module once', () => {
    const names = MODULES.map((m) => m.name)
    expect(names.filter((n, i) => names.indexOf(n) !== i)).toEqual([])
  })

  it('says where each module is, as require finds it: lib/ (emulated), lib/fallback/ (fallback), nowhere (not emulated)', () => {
    const wrong = MODULES.flatMap((m) => {
      const own = fileOf(m, '')
      const fallback = fileOf(m, 'fallback/')
      const ok =
        m.status === 'emulated'
          ? (own ?? m.files) !== undefined && !fallback
          : m.status === 'fallback'
            ? fallback && !own
            : !own && !fallback
      return ok ? [] : [`${m.name} (${m.status}): lib/ ${own ?? '-'}, lib/fallback/ ${fallback ?? '-'}`]
    })
    expect(wrong).toEqual([])
    expect(MODULES.flatMap((m) => m.files ?? []).filter((f) => !FILES.includes(f))).toEqual([])
  })

  it('covers every Lua file broker has (a module, or the machinery)', () => {
    const claimed = new Set([...MODULES.flatMap(filesOf), ...MACHINERY.map((r) => r.file)])
    expect(FILES.filter((f) => !claimed.has(f))).toEqual([])
  })

  it("lists the host operations each module's files call, no more and no fewer", () => {
    const differ = [
      ...MODULES.map((m) => ({ name: m.name, declared: m.ops, called: filesOf(m).flatMap(callsOf) })),
      ...MACHINERY.map((r) => ({ name: r.file, declared: r.ops, called: callsOf(r.file) })),
    ].filter((e) => sorted(e.declared).join() !== sorted(e.called).join())
    expect(
      differ.map((e) => `${e.name}: declared ${sorted(e.declared).join(' ')}; called ${sorted(e.called).join(' ')}`),
    ).toEqual([])
  })

  it('declares only host operations the host has, and every one the host has (host and Lua callers equal)', () => {
    const declared = sorted([...MODULES, ...MACHINERY].flatMap((e) => e.ops))
    expect(declared.filter((op) => !Object.hasOwn(OPS, op))).toEqual([])
    expect(Object.keys(OPS).filter((op) => !declared.includes(op))).toEqual([])
    // and what the Lua files call, whether or not the manifest has the file
    expect(sorted(FILES.flatMap(callsOf)).filter((op) => !Object.hasOwn(OPS, op))).toEqual([])
  })

  it('has an on-use hint for every module a Lua file stops on use (broker.unsupported)', () => {
    const named = sorted(
      FILES.flatMap((f) => [...source(f).matchAll(/unsupported\(\s*"([\w.-]+)"/g)].map((m) => m[1]!)),
    )
    const made = sorted(FILES.flatMap((f) => [...source(f).matchAll(/_make\(\s*"([\w.-]+)"/g)].map((m) => m[1]!)))
    expect([...named, ...made, 'socket.http'].filter((n) => !MODULES.find((m) => m.name === n)?.onUse)).toEqual([])
  })
})

describe('the manifest of nginx variables', () => {
  it('names each variable once', () => {
    const names = NGINX_VARIABLES.map((v) => v.name)
    expect(names.filter((n, i) => names.indexOf(n) !== i)).toEqual([])
  })

  it('lists as answered exactly the variables host/vars.ts answers', () => {
    const answered = NGINX_VARIABLES.filter((v) => v.status !== 'not emulated').map((v) => v.name)
    expect(sorted(answered)).toEqual(sorted(VARIABLES))
  })
})
