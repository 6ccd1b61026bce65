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
 * Whether the root's own spec/helpers.lua is the repository's (a plain busted helper) rather than a copy of
 * Kong's: outside Kong's checkout, a spec/helpers.lua that does not define Kong's `start_kong`. Ours serves
 * `require "spec.helpers"` otherwise.
 */
export function ownSpecHelpers(root: string): boolean {
  const file = join(root, 'spec', 'helpers.lua')
  if (!existsSync(file) || existsSync(join(root, 'kong', 'meta.lua'))) return false
  return !/\bstart_kong\b/.test(readFileSync(file, 'utf8'))
}
