/** What `broker pdk run` (and the dashboard's PDK panel) says about a fixture or a plugin server. No HTTP status. */
import { type ErrorSpec, type MessageSpec } from './spec.js'

export const PDK_ERRORS = {
  PDK_PLUGIN_SERVER_UNAVAILABLE: {
    exit: 2,
    next: 'Check that the plugin loads in the server (its output is quoted above), or run without --plugin-server.',
  },
  FIXTURE_INVALID: {
    exit: 2,
    next: 'Fix the field named above; docs/fixture-format.md describes every field (`broker pdk schema` prints where its JSON Schema is).',
  },
  PDK_PLUGIN_CONFIG_INVALID: {
    exit: 2,
    next: "Fix the config field named above so the plugin's schema.lua accepts it, as Kong's Admin API would.",
  },
  LUA_MODULE_UNSUPPORTED: {
    exit: 2,
    next: "Put a module of your own under that name on a folder in the fixture's lua_path (or --lua-path), or test this plugin with a real Kong.",
  },
  LUA_MODULE_NOT_FOUND: {
    exit: 2,
    next: "Install the module (luarocks, or your system's Lua 5.1 packages) or add the folder that holds it to the fixture's lua_path (or --lua-path, LUA_PATH).",
  },
  LUA_SYNTAX: {
    exit: 2,
    next: 'Fix the Lua at the file and line named above: broker loads plugins with Lua 5.4, and the LuaJIT constructs it cannot read are listed in docs/lua-plugins.md (LuaJIT and Lua 5.4).',
  },
  LUA_SYNTAX_LUAJIT: {
    exit: 2,
    next: "broker runs Lua 5.4, which cannot read LuaJIT's own syntax (docs/lua-plugins.md, LuaJIT and Lua 5.4): rewrite that line if the file is the plugin's; if it is a library's, put a version of the library without it on lua_path, or test the plugin with a real Kong.",
  },
  PDK_OUTBOUND_UNMATCHED: {
    exit: 2,
    next: 'Add an entry to the fixture\'s "outbound" list whose request matches that call (entries are tried in order; docs/fixture-format.md), or check the URL the plugin builds.',
  },
  PDK_SPEC_NOT_FOUND: {
    exit: 2,
    next: "Run `broker pdk test` from the plugin's root (the folder holding kong/plugins/<name>/ and spec/), or name spec files or folders: `broker pdk test spec/myplugin`.",
  },
  PDK_SPEC_CONFIG_INVALID: {
    exit: 2,
    next: 'Fix the .busted file (a Lua file returning { default = { … } }, as busted reads it), or give the option on the command line.',
  },
} as const satisfies Record<string, ErrorSpec & { readonly status?: never }>

/** The messages of these codes, as templates (see index.ts). */
/** Where a fixture path that leads nowhere sends the user: an installed copy has no fixtures/pdk in the current folder. */
const SHIPPED_NEXT =
  'Check the path: `broker pdk run <file or folder>` takes fixture files or folders of them, or the name of a fixture shipped with broker, e.g. `broker pdk run js-hello`.'

export const PDK_MESSAGES = {
  /** FixtureError's message, which names the file and the field. */
  fixtureInvalid: {
    code: 'FIXTURE_INVALID',
    text: (v: { message: string }) => v.message,
    details: (v: { file: string; path: string }) => ({ file: v.file, path: v.path }),
  },
  /** `broker pdk run --plugin-server`: the plugin server did not start or does not serve the plugin. */
  pluginServerUnavailable: {
    code: 'PDK_PLUGIN_SERVER_UNAVAILABLE',
    text: (v: { reason: string }) => `Cannot run the plugin server: ${v.reason}.`,
  },
  /** A fixture path that is no readable file: nothing to fix inside it. */
  fixtureUnreadable: {
    code: 'FIXTURE_INVALID',
    text: (v: { message: string }) => v.message,
    details: (v: { file: string; path: string }) => ({ file: v.file, path: v.path }),
    next: SHIPPED_NEXT,
  },
  shippedFixtureUnknown: {
    code: 'FIXTURE_INVALID',
    text: (v: { name: string; folder: string; suggestion?: string }) =>
      `"${v.name}" is neither a file here nor a fixture shipped with broker (${v.folder}).${v.suggestion ? ` Did you mean ${v.suggestion}?` : ''}`,
    details: (v: { name: string }) => ({ file: v.name, path: '$' }),
    next: SHIPPED_NEXT,
  },
  /** A Lua plugin's config that its schema.lua refuses (Kong's message, the field named). */
  pluginConfigInvalid: {
    code: 'PDK_PLUGIN_CONFIG_INVALID',
    text: (v: { message: string }) => v.message,
    details: (v: { file: string; path: string }) => ({ file: v.file, path: v.path }),
  },
  /** A Lua plugin requires a module broker does not emulate (resty.openssl.x509, ffi …). */
  luaModuleUnsupported: {
    code: 'LUA_MODULE_UNSUPPORTED',
    text: (v: { message: string }) => v.message,
    details: (v: { file: string; path: string }) => ({ file: v.file, path: v.path }),
  },
  /** A Lua plugin calls an nginx API broker does not emulate (ngx.socket.tcp): no module on lua_path replaces it. */
  luaNgxUnsupported: {
    code: 'LUA_MODULE_UNSUPPORTED',
    text: (v: { message: string }) => v.message,
    details: (v: { file: string; path: string }) => ({ file: v.file, path: v.path }),
    next: "That is OpenResty's own API, which no module on lua_path can stand in for: test this part of the plugin with a real Kong.",
  },
  /** A Lua plugin requires a module found on none of the Lua roots (a rock the plugin depends on, not installed). */
  luaModuleNotFound: {
    code: 'LUA_MODULE_NOT_FOUND',
    text: (v: { message: string }) => v.message,
    details: (v: { file: string; path: string }) => ({ file: v.file, path: v.path }),
  },
  /** A Lua file of the plugin (or a module it requires) that does not parse. */
  luaSyntax: {
    code: 'LUA_SYNTAX',
    text: (v: { message: string }) => v.message,
    details: (v: { file: string; path: string }) => ({ file: v.file, path: v.path }),
  },
  /** A library's Lua file (not the plugin's own) that does not parse: the plugin's author cannot fix it there. */
  luaSyntaxLibrary: {
    code: 'LUA_SYNTAX',
    text: (v: { message: string }) => v.message,
    details: (v: { file: string; path: string }) => ({ file: v.file, path: v.path }),
    next: "Put a version of that library that parses on the fixture's lua_path (or --lua-path), which is searched before the system folders, or test the plugin with a real Kong.",
  },
  /** A LuaJIT-only construct (an imaginary number literal) in the plugin's Lua or a library's. */
  luajitSyntax: {
    code: 'LUA_SYNTAX_LUAJIT',
    text: (v: { message: string }) => v.message,
    details: (v: { file: string; path: string }) => ({ file: v.file, path: v.path }),
  },
  /** A Lua plugin's resty.http call that no entry of the fixture's `outbound` answers. */
  outboundUnmatched: {
    code: 'PDK_OUTBOUND_UNMATCHED',
    text: (v: { message: string }) => v.message,
    details: (v: { file: string; path: string }) => ({ file: v.file, path: v.path }),
  },
  /** `broker pdk run` of an empty folder or a glob the shell left unexpanded: 0 passed would hide a typo in CI. */
  noFixtureFound: {
    code: 'FIXTURE_INVALID',
    text: (v: { path: string }) => `No fixture found in ${v.path}: a folder must hold *.json fixture files.`,
    details: (v: { path: string }) => ({ file: v.path, path: '$' }),
    next: 'Check the folder or pattern: `broker pdk run <file or folder>`; the fixtures shipped with broker run by name, e.g. `broker pdk run js-hello`.',
  },
  /** `broker pdk test`: a path on the command line (or in .busted's ROOT) that does not exist. */
  specPathNotFound: {
    code: 'PDK_SPEC_NOT_FOUND',
    text: (v: { message: string }) => v.message,
    details: (v: { path: string }) => ({ path: v.path }),
  },
  /** `broker pdk test` of a folder without a spec file: 0 passed would hide a typo in CI. */
  specNoneFound: {
    code: 'PDK_SPEC_NOT_FOUND',
    text: (v: { message: string }) => v.message,
    details: (v: { path: string }) => ({ path: v.path }),
    next: "Spec files are named *_spec.lua (busted's default pattern); --pattern takes another Lua pattern.",
  },
  /** A .busted file that does not run, returns no table of tasks, or names an output broker does not write. */
  bustedInvalid: {
    code: 'PDK_SPEC_CONFIG_INVALID',
    text: (v: { message: string }) => v.message,
    details: (v: { path: string }) => ({ file: v.path }),
  },
} as const satisfies Record<string, MessageSpec>
