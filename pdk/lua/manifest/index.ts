/**
 * The Lua boundary's manifest: every module a Lua plugin may require with what broker does with it, broker's own
 * Lua machinery, and nginx's variables. The loader's refusals (modules.ts), the warning for a variable nginx has
 * and broker does not (host/vars.ts), docs/lua-plugins.md's tables (scripts/lua-doc.ts) and the test holding the
 * host operations equal to their Lua callers (manifest.test.ts) all read it. A new module is one entry in the
 * file of its family (openresty.ts, kong.ts, libraries.ts).
 */
import { KONG_MODULES } from './kong.js'
import { LIBRARY_MODULES } from './libraries.js'
import { MACHINERY } from './machinery.js'
import { OPENRESTY_MODULES } from './openresty.js'
import type { LuaModule, NginxVariable } from './types.js'
import { NGINX_VARIABLES } from './variables.js'

export type { LuaModule, ModuleStatus, NginxVariable, RuntimeFile, VariableStatus } from './types.js'
export { MACHINERY, NGINX_VARIABLES }

/** Every module the manifest knows, by family. */
export const MODULES: readonly LuaModule[] = [...OPENRESTY_MODULES, ...KONG_MODULES, ...LIBRARY_MODULES]

const byName = new Map(MODULES.map((m) => [m.name, m]))

/** The manifest's entry for a module name. */
export const moduleNamed = (name: string): LuaModule | undefined => byName.get(name)

/**
 * The hint for a module broker refuses: the module itself, or the nearest package above it that is not
 * emulated or names a hint for its unlisted submodules (`resty.openssl.x509.chain` → `resty.openssl.x509`;
 * `resty.openssl.pkcs12` → `resty.openssl`). Undefined for a module broker does not know of.
 */
export function notEmulatedHint(name: string): string | undefined {
  const own = byName.get(name)
  if (own?.status === 'not emulated') return own.doc
  for (let n = name; n.includes('.');) {
    n = n.slice(0, n.lastIndexOf('.'))
    const m = byName.get(n)
    if (m?.status === 'not emulated') return m.doc
    if (m?.unlisted) return m.unlisted
  }
  return undefined
}

/** What to do instead of calling a module that loads but is not emulated (resty.redis, ngx.socket.*). */
export function onUseHint(name: string): string {
  const m = byName.get(name)
  return m?.onUse ?? (m?.status === 'not emulated' ? m.doc : 'not emulated by broker')
}

const variables = new Map(NGINX_VARIABLES.filter((v) => !v.name.endsWith('*')).map((v) => [v.name, v]))
const families = NGINX_VARIABLES.filter((v) => v.name.endsWith('*'))

/** The manifest's entry for `ngx.var.<name>`: the variable, or the family its prefix names. */
export function variableNamed(name: string): NginxVariable | undefined {
  return variables.get(name) ?? families.find((f) => name.startsWith(f.name.slice(0, -1)))
}
