/**
 * The modules a plugin root's rockspec installs (`build.modules`, the `builtin` build type): where a
 * repository keeps its plugin outside `kong/plugins/<name>/` (a `<name>/` folder at the root, or
 * handler.lua beside the rockspec), `luarocks make` is what puts it where Kong's `require` finds it.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'

// `["a.b.c"] = "path/to/file.lua"` inside build.modules; read as text, not run: a rockspec is Lua, but
// its module table is always this literal shape, and nothing else in a rockspec maps a name to a .lua
const ENTRY = /\[\s*(["'])([\w.-]+)\1\s*\]\s*=\s*(["'])([^"'\n]+\.lua)\3/g

/** The text of each `*.rockspec` at the root, by name; none when the root cannot be read. */
function rockspecs(root: string): string[] {
  try {
    return readdirSync(root)
      .filter((f) => f.endsWith('.rockspec'))
      .sort()
      .map((f) => readFileSync(join(root, f), 'utf8'))
  } catch {
    return []
  }
}

/** A module's file (absolute) and the path tracebacks show (as the rockspec names it). */
export interface NamedModule {
  file: string
  shown: string
}

/**
 * Module name → its file, from every `*.rockspec` at the root, for files that exist and that the root's
 * own search would not find under the module's name.
 */
export function rockspecModules(root: string): Map<string, NamedModule> {
  const map = new Map<string, NamedModule>()
  for (const text of rockspecs(root)) {
    const build = text.indexOf('build')
    if (build < 0) continue
    for (const m of text.slice(build).matchAll(ENTRY)) {
      const [, , module, , path] = m as unknown as [string, string, string, string, string]
      // where the root already has it (Kong's own rockspec maps kong/… to kong/…), the root's search finds it
      const conventional = module.split('.').join('/')
      if (path === `${conventional}.lua` || path === `${conventional}/init.lua`) continue
      const file = resolve(root, path)
      if (!map.has(module) && existsSync(file)) map.set(module, { file, shown: path })
    }
  }
  return map
}

// rocks every Kong has: depending on them says nothing about what is missing
const PROVIDED = new Set(['lua', 'kong', 'luajit'])

/** The rocks the root's rockspecs depend on (`dependencies = { "classic 0.1.0-1" }`), Lua and Kong left out. */
export function rockspecDependencies(root: string): string[] {
  const rocks = new Set<string>()
  for (const text of rockspecs(root)) {
    const list = /\bdependencies\s*=\s*\{([^}]*)\}/.exec(text)?.[1] ?? ''
    for (const m of list.matchAll(/(["'])\s*([\w.-]+)[^"']*\1/g)) if (!PROVIDED.has(m[2]!)) rocks.add(m[2]!)
  }
  return [...rocks]
}
