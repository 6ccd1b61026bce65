/**
 * What a plugin root's rockspec says: the modules it installs (`build.modules`, the `builtin` build type) and the
 * rocks it depends on. Where a repository keeps its plugin outside `kong/plugins/<name>/` (`src/`, a `<name>/`
 * folder at the root, handler.lua beside the rockspec), `luarocks make` is what puts it where Kong's `require`
 * finds it; broker maps the same names to the same files, for a spec's `require` and start_kong's plugin loading.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join, resolve, sep } from 'node:path'
import type { LuaVm } from '../lua/vm.js'

/** The root's rockspec that luarocks would build: the newest by name when there are several. */
export function rootRockspec(root: string): string | undefined {
  try {
    return readdirSync(root)
      .filter((f) => f.endsWith('.rockspec'))
      .sort((a, b) => a.localeCompare(b, 'en', { numeric: true }))
      .pop()
  } catch {
    return undefined
  }
}

/** A module's file (absolute) and the path tracebacks show (as the rockspec names it). */
export interface NamedModule {
  file: string
  shown: string
}

// the rockspec runs in an empty environment (a rockspec is Lua: keys are often built with `..`), and its
// build.modules come back as { name, file } pairs of strings naming .lua files
const READ = `
local source, chunkname = ...
local env = {}
local chunk = load(source, chunkname, "t", env)
if not chunk or not pcall(chunk) then return {} end
local modules = type(env.build) == "table" and env.build.modules
local out = {}
if type(modules) ~= "table" then return out end
for name, file in pairs(modules) do
  if type(name) == "string" and type(file) == "string" and file:match("%.lua$") then out[#out + 1] = { name, file } end
end
return out`

/**
 * Module name → its file, from the root's rockspec run in `vm`, for files that exist inside the root and that the
 * root's own search would not find under the module's name.
 */
export function rockspecModules(root: string, vm: LuaVm): Map<string, NamedModule> {
  const map = new Map<string, NamedModule>()
  const rockspec = rootRockspec(root)
  if (rockspec === undefined) return map
  const dir = resolve(root)
  vm.register('__rockspec_read', () => [readFileSync(join(dir, rockspec), 'utf8'), `@${rockspec}`])
  const [pairs] = vm.run(`return (function(...) ${READ} end)(__rockspec_read())`, '@broker:rockspec')
  const entries = Array.isArray(pairs) ? (pairs as [string, string][]) : []
  for (const [module, path] of entries.sort(([a], [b]) => a.localeCompare(b))) {
    // where the root already has it (Kong's own rockspec maps kong/… to kong/…), the root's search finds it
    const conventional = module.split('.').join('/')
    if (path === `${conventional}.lua` || path === `${conventional}/init.lua`) continue
    const file = resolve(dir, path)
    if (file.startsWith(dir + sep) && existsSync(file)) map.set(module, { file, shown: path })
  }
  return map
}

// rocks every Kong has: depending on them says nothing about what is missing
const PROVIDED = new Set(['lua', 'kong', 'luajit'])

/** The rocks the root's rockspec depends on (`dependencies = { "classic 0.1.0-1" }`), Lua and Kong left out. */
export function rockspecDependencies(root: string): string[] {
  const rockspec = rootRockspec(root)
  if (rockspec === undefined) return []
  const text = readFileSync(join(root, rockspec), 'utf8')
  const rocks = new Set<string>()
  const list = /\bdependencies\s*=\s*\{([^}]*)\}/.exec(text)?.[1] ?? ''
  for (const m of list.matchAll(/(["'])\s*([\w.-]+)[^"']*\1/g)) if (!PROVIDED.has(m[2]!)) rocks.add(m[2]!)
  return [...rocks]
}
