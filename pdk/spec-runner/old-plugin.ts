/**
 * spec.helpers.use_old_plugin(name), as Kong's helpers do it: the Kong a spec starts next loads the plugin's files
 * from an older Kong's source (KONG_SPEC_TEST_OLD_VERSION_KONG_PATH, else Kong's default folder), until the function
 * it answers puts the current plugin back. Kong copies that one plugin's folder to the front of LUA_PATH; here its
 * files become named modules, which `require` finds before any root (the runtime's finder forgets what it found).
 */
import { existsSync, readdirSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import type { NamedModule } from './rockspec.js'

/** Where Kong's spec constants look for an older Kong when the variable is not set. */
export const OLD_KONG_DEFAULT = '/usr/local/share/lua/5.1/kong/kong-old'
const VARIABLE = 'KONG_SPEC_TEST_OLD_VERSION_KONG_PATH'

/** The .lua files under a folder, as module names below `prefix`. */
function modulesUnder(dir: string, prefix: string): [string, string][] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e): [string, string][] => {
    const file = join(dir, e.name)
    if (e.isDirectory()) return modulesUnder(file, `${prefix}.${e.name}`)
    if (!e.name.endsWith('.lua')) return []
    const base = e.name.slice(0, -4)
    return [[base === 'init' ? prefix : `${prefix}.${base}`, file]]
  })
}

export class OldPlugins {
  /** What each plugin's names were in `named` before (the root's rockspec may name them), to put back. */
  private readonly used = new Map<string, [string, NamedModule | undefined][]>()

  constructor(
    private readonly named: Map<string, NamedModule>,
    /** Has `require` look again for a module and those under it. */
    private readonly forget: (name: string) => void,
    /** The variable as the spec's environment (helpers.setenv) or broker's has it. */
    private readonly getenv: (name: string) => string | undefined,
  ) {}

  /** The old plugin's modules replace the current one's; an error naming where it looked when there is none. */
  use(name: string): [true] | [undefined, string] {
    const base = this.getenv(VARIABLE) ?? OLD_KONG_DEFAULT
    const dir = join(base, 'kong', 'plugins', name)
    if (!existsSync(dir) || !statSync(dir).isDirectory())
      return [
        undefined,
        `use_old_plugin: no older ${name} plugin (no folder ${dir}; ${VARIABLE} names the older Kong's source, else ${OLD_KONG_DEFAULT})`,
      ]
    this.recover(name)
    const prefix = `kong.plugins.${name}`
    const before = modulesUnder(dir, prefix).map(([module, file]): [string, NamedModule | undefined] => {
      const was = this.named.get(module)
      this.named.set(module, { file, shown: relative(base, file) })
      return [module, was]
    })
    this.used.set(name, before)
    this.forget(prefix)
    return [true]
  }

  /** The current plugin's modules again. */
  recover(name: string): void {
    for (const [module, was] of this.used.get(name) ?? []) {
      if (was) this.named.set(module, was)
      else this.named.delete(module)
    }
    this.used.delete(name)
    this.forget(`kong.plugins.${name}`)
  }
}
