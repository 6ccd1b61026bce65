/** Kong's own Lua modules (`kong`, `kong.*`) as the Lua face offers them: see types.ts for the statuses. */
import type { LuaModule } from './types.js'

/** A pure-Lua kong.tools module of Kong's, written anew for a plugin run without a Kong checkout on lua_path. */
const tool = (name: string, doc: string, ops: readonly string[] = []): LuaModule => ({
  name: `kong.tools.${name}`,
  status: 'fallback',
  doc: `${doc}; Kong's own file wins when a Kong checkout is on lua_path`,
  ops,
})

export const KONG_MODULES: readonly LuaModule[] = [
  {
    name: 'kong',
    status: 'emulated',
    doc: "the `kong` global: the emulated kit with Lua's shapes (`nil, err`, tables), `kong.ctx`, `kong.db` and `kong.cache` on the fixture's `db`, `kong.configuration`",
    files: ['broker/kong.lua', 'broker/db.lua'],
    ops: ['trace'],
  },
  {
    name: 'kong.db.schema',
    status: 'emulated',
    doc: '`define`, `validators.is_regex`',
    ops: ['re_check'],
  },
  {
    name: 'kong.db.schema.typedefs',
    status: 'emulated',
    doc: "the field types plugin schemas name, callable with overrides; `queue` with Kong 3.9's parameters",
    ops: [],
  },
  {
    name: 'kong.resty.mlcache',
    status: 'emulated',
    doc: "one worker's cache: `get` runs the callback once a key",
    ops: [],
  },
  {
    name: 'kong.meta',
    status: 'fallback',
    doc: "the version of Kong the emulator is (`_VERSION`, `_VERSION_TABLE`, `_SERVER_TOKENS`, `_NAME`); a Kong checkout's own wins",
    ops: [],
  },
  {
    name: 'kong.workspaces',
    status: 'fallback',
    doc: "one workspace, `default`, as in Kong's open-source edition: `get_workspace_id`, `get_workspace_name`, `set_workspace`, `get_workspace`, `upsert_default`; a Kong checkout's own wins",
    ops: [],
  },
  {
    name: 'kong.tools.gzip',
    status: 'emulated',
    doc: "`deflate_gzip`, `inflate_gzip` on Node's zlib",
    ops: ['gzip'],
  },
  { name: 'kong.tools.mime_type', status: 'emulated', doc: '`parse_mime_type`, `includes` (LPeg in Kong)', ops: [] },
  {
    name: 'kong.tools.queue',
    status: 'emulated',
    doc: "Kong's queue parameters and checks; entries are queued and never sent (a replay runs no timer)",
    ops: ['trace'],
  },
  { name: 'kong.tools.rand', status: 'emulated', doc: "random bytes and strings from the host's CSPRNG", ops: [] },
  {
    name: 'kong.tools.time',
    status: 'emulated',
    doc: '`nginx_conf_time_to_seconds`, `time_ns`, `get_now_ms` and the other clocks (FFI in Kong)',
    ops: ['time_ns'],
  },
  { name: 'kong.tools.uuid', status: 'emulated', doc: '`uuid`, `is_valid_uuid`', ops: [] },
  tool('http', "what plugins use of Kong 3.x's kong.tools.http; the other functions raise an error naming themselves"),
  tool('ip', 'address checks on the host; the functions broker has not written raise an error naming themselves', [
    'ip_parse',
  ]),
  tool('string', "Kong 3.x's kong.tools.string"),
  tool('table', "Kong 3.x's kong.tools.table"),
  tool('utils', 'the functions of the seven tools modules under one table, as Kong 3.x gathers them'),
  {
    name: 'kong.runloop.balancer',
    status: 'emulated',
    doc: "as a Kong with no upstream entities (what prometheus reads of upstream health); a replay connects to the fixture's service alone",
    ops: [],
  },
  {
    name: 'kong.runloop.balancer.upstreams',
    status: 'emulated',
    doc: 'as a Kong with no upstream entities',
    ops: [],
  },
  {
    name: 'kong.runloop.wasm',
    status: 'emulated',
    doc: "Kong with `wasm = off`, its default (filters run in ngx_wasm_module, nginx's C); enabling it raises an error naming it",
    ops: [],
  },
  {
    name: 'kong.plugins.base_plugin',
    status: 'not emulated',
    doc: 'Kong 3.0 removed it: a handler is a plain table since; this plugin was written for Kong 2.x (put a base_plugin.lua of Kong 2.8 on lua_path to try it anyway)',
    ops: [],
  },
]
