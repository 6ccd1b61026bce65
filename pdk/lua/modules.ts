/**
 * Where `require` finds Lua modules: the modules broker writes (C, FFI or OpenResty underneath in
 * Kong, so they win over same-named files), then the plugin's own root, the fixture's `lua_path`,
 * `--lua-path`, `LUA_PATH` templates, the system Lua folders, and last broker's fallbacks
 * (resty.redis, resty.http), which any of those overrides.
 */
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { dropLuajitLiterals } from './luajit-syntax.js'
import { notEmulatedHint } from './manifest/index.js'

const HERE = dirname(fileURLToPath(import.meta.url))

/** The folder of broker's own Lua modules (beside the sources; a build copies only .ts). */
export const LIB_DIR = [join(HERE, 'lib'), resolve(HERE, '../../../pdk/lua/lib')].find((d) => existsSync(d))!

/**
 * broker's modules that a file on a Lua root or in the system folders overrides: they are searched
 * last, so a stub (or the real library) of the user's own wins.
 */
export const FALLBACK_DIR = join(LIB_DIR, 'fallback')

/** Folders a Debian or luarocks Lua 5.1 install puts pure-Lua modules in (Penlight resolves there). */
export const SYSTEM_DIRS = ['/usr/local/share/lua/5.1', '/usr/share/lua/5.1']

/**
 * Whether `name` (or the package it is part of) is known to be unemulated; its hint. The list is the
 * manifest's (manifest/): the modules whose status is `not emulated`, and the packages naming a hint for
 * submodules they do not list.
 */
export const notEmulated = notEmulatedHint

export interface Found {
  file: string
  /** The file as tracebacks name it: relative to its root (`kong/plugins/x/handler.lua`). */
  shown: string
  source: Buffer
}

/** `?`-templates for a folder: `a/b.lua` and `a/b/init.lua`. */
const templates = (dir: string): string[] => [join(dir, '?.lua'), join(dir, '?', 'init.lua')]

/** Lua's `LUA_PATH` (`;`-separated templates, `;;` for the defaults). */
export function luaPathTemplates(value: string | undefined): string[] {
  if (!value) return []
  return value.split(';').filter((t) => t !== '' && t.includes('?'))
}

// where in the search the named modules (a rockspec's build.modules) are looked up
const NAMED = '\0named'

/**
 * The search path of one runtime: emulated modules first, then the modules named to a file (a
 * rockspec's, as luarocks installs them), then the roots in order.
 */
export class ModuleFinder {
  private readonly paths: string[]
  private readonly cache = new Map<string, Found | string[]>()

  constructor(
    roots: readonly string[],
    extraTemplates: readonly string[] = [],
    private readonly named: ReadonlyMap<string, { file: string; shown: string }> = new Map(),
  ) {
    this.paths = [
      ...templates(LIB_DIR),
      NAMED,
      ...roots.flatMap(templates),
      ...extraTemplates,
      ...SYSTEM_DIRS.flatMap(templates),
      ...templates(FALLBACK_DIR),
    ]
  }

  /** The module's file and source, or the files tried. */
  find(name: string): Found | string[] {
    let hit = this.cache.get(name)
    if (hit) return hit
    const rel = name.replace(/\./g, '/')
    const tried: string[] = []
    for (const t of this.paths) {
      if (t === NAMED) {
        const named = this.named.get(name)
        if (named === undefined) continue
        tried.push(named.file)
        hit = { ...named, source: dropLuajitLiterals(readFileSync(named.file)) }
        break
      }
      const file = t.replace(/\?/g, rel)
      tried.push(file)
      try {
        hit = { file, shown: file.slice(t.indexOf('?')), source: dropLuajitLiterals(readFileSync(file)) }
        break
      } catch {
        // not there: the next template
      }
    }
    hit ??= tried
    this.cache.set(name, hit)
    return hit
  }

  /** Forgets what was found for `name` and the modules under it (`name.*`): the next `find` looks again. */
  forget(name: string): void {
    for (const key of this.cache.keys()) if (key === name || key.startsWith(name + '.')) this.cache.delete(key)
  }
}
