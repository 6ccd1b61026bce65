/** The shapes of the Lua boundary's manifest: the modules a plugin may require, broker's own Lua machinery, nginx's variables. */

/**
 * What broker does with a module a plugin requires:
 * - `emulated`: broker's own Lua (pdk/lua/lib/), found before any root, so it wins over a same-named file;
 * - `fallback`: broker's own Lua (pdk/lua/lib/fallback/), found last, so a root's or lua_path's module wins;
 * - `not emulated`: requiring it stops the run at once with the entry's `doc` as the hint (LUA_MODULE_UNSUPPORTED).
 */
export type ModuleStatus = 'emulated' | 'fallback' | 'not emulated'

/** One module a plugin may `require` (or a global such as `ngx`, which is also `package.loaded.ngx`). */
export interface LuaModule {
  /** The name `require` takes. */
  readonly name: string
  readonly status: ModuleStatus
  /** One line for docs/lua-plugins.md; for a module not emulated, the hint the refusal gives (what to do instead). */
  readonly doc: string
  /** The host operations (`__host("<op>", …)`, pdk/lua/host/) the module's files call; manifest.test.ts holds them equal. */
  readonly ops: readonly string[]
  /**
   * The files under pdk/lua/lib/ that make the module when they are not the file its name resolves to (the `ngx`
   * global is broker/ngx.lua and its helpers; `bit` lives in the prelude).
   */
  readonly files?: readonly string[]
  /** The module loads, but calling its functions stops the run (resty.redis): the hint that refusal gives. */
  readonly onUse?: string
  /** The hint for a submodule the manifest does not list (`resty.openssl.pkcs12` under `resty.openssl`). */
  readonly unlisted?: string
}

/** A file of broker's own Lua machinery (the VM's boot, the prelude, per-request state): no module a plugin requires. */
export interface RuntimeFile {
  /** Relative to pdk/lua/lib/. */
  readonly file: string
  readonly doc: string
  readonly ops: readonly string[]
}

/**
 * What `ngx.var.<name>` reads in a replay:
 * - `emulated`: the value nginx (or Kong's template) would have, from the replay's request;
 * - `fallback`: a stand-in value, the same in every replay (a replay has no connection, TLS session or timings);
 * - `not emulated`: nginx in Kong has the variable, broker does not: it reads nil, with one warning per request.
 */
export type VariableStatus = 'emulated' | 'fallback' | 'not emulated'

/** One nginx variable, or a family of them named by a prefix (`http_*`). */
export interface NginxVariable {
  /** The name after `ngx.var.`; a family ends in `*`. */
  readonly name: string
  readonly status: VariableStatus
  /** The nginx module (or Kong's template) that defines it. */
  readonly from: string
  /** One line for docs/lua-plugins.md: its value in a replay, or why it is not emulated. */
  readonly doc: string
}
