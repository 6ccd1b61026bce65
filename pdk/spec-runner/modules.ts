/** The Lua modules of the spec runner (busted, luassert, say, spec.helpers): broker's own, preloaded. */
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const HERE = dirname(fileURLToPath(import.meta.url))

/** The folder of the spec runner's Lua (beside the sources; a build copies only .ts). */
export const SPEC_LUA_DIR = [join(HERE, 'lua'), resolve(HERE, '../../../pdk/spec-runner/lua')].find((d) =>
  existsSync(d),
)!

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? walk(join(dir, e.name)) : e.name.endsWith('.lua') ? [join(dir, e.name)] : [],
  )
}

let cached: Map<string, { file: string; source: string }> | undefined

/** Module name → its file (as tracebacks show it) and source; `a/init.lua` is module `a`. */
export function specModules(): Map<string, { file: string; source: string }> {
  if (cached) return cached
  cached = new Map()
  for (const abs of walk(SPEC_LUA_DIR)) {
    const rel = relative(SPEC_LUA_DIR, abs).split('\\').join('/')
    const name = rel
      .replace(/\.lua$/, '')
      .replace(/\/init$/, '')
      .split('/')
      .join('.')
    cached.set(name, { file: rel, source: readFileSync(abs, 'utf8') })
  }
  return cached
}

/**
 * Lua that puts every module in package.preload, searched before any root: ours win (spec.helpers
 * even inside a Kong checkout), and their chunk names start with `broker:` so a failure's position
 * is the spec's line, not ours.
 */
export const PRELOAD = `
for _, m in ipairs(__spec_modules()) do
  local name, file = m[1], m[2]
  package.preload[name] = function(...)
    return assert(load(__spec_source(name), "@broker:" .. file, "t"))(...)
  end
end`

/**
 * Lua that maps the modules a plugin root's rockspec names in `build.modules` to their files, as luarocks installs
 * them, as `__spec_rockspec_modules(file)` (a plugin kept in src/ is `kong.plugins.<name>.handler` once installed). The rockspec runs in an empty
 * environment; a module broker or the spec runner preloads keeps its own. `__spec_root_source(file)` reads a file
 * of the root (nil when there is none).
 */
export const ROCKSPEC_MODULES = `
function __spec_rockspec_modules(rockspec)
local env = {}
local chunk = load(__spec_root_source(rockspec) or "", "@" .. rockspec, "t", env)
if not chunk or not pcall(chunk) then return end
local modules = type(env.build) == "table" and env.build.modules
if type(modules) ~= "table" then return end
for name, file in pairs(modules) do
  if type(name) == "string" and type(file) == "string" and file:match("%.lua$") and not package.preload[name] then
    local source = __spec_root_source(file)
    if source then
      package.preload[name] = function(...)
        return assert(load(source, "@" .. file, "t"))(...)
      end
    end
  end
end
end`

/** The root's rockspec that luarocks would build: the newest by name when there are several. */
export function rootRockspec(root: string): string | undefined {
  return readdirSync(root)
    .filter((f) => f.endsWith('.rockspec'))
    .sort((a, b) => a.localeCompare(b, 'en', { numeric: true }))
    .pop()
}

/**
 * Whether the root's own spec/helpers.lua is the repository's (a plain busted helper) rather than a copy of
 * Kong's: outside Kong's checkout, a spec/helpers.lua that does not define Kong's `start_kong`. Ours serves
 * `require "spec.helpers"` otherwise.
 */
export function ownSpecHelpers(root: string): boolean {
  const file = join(root, 'spec', 'helpers.lua')
  if (!existsSync(file) || existsSync(join(root, 'kong', 'meta.lua'))) return false
  return !/\bstart_kong\b/.test(readFileSync(file, 'utf8'))
}
