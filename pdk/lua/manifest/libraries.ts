/**
 * The other Lua libraries Kong's runtime gives plugins (lua-cjson, LuaSocket, luatz, LuaFileSystem, LuaJIT's own
 * modules, the C rocks Kong bundles) as the Lua face offers them: see types.ts for the statuses.
 */
import type { LuaModule } from './types.js'

/** A function LuaJIT's `table` library gains as a module (`require "table.new"`); the prelude adds them. */
const tableExtension = (name: string, doc: string): LuaModule => ({
  name: `table.${name}`,
  status: 'emulated',
  doc,
  files: ['broker/prelude.lua'],
  ops: [],
})

/** A C module Kong's build carries: nothing a Lua 5.4 VM could load. */
const cModule = (name: string, what: string): LuaModule => ({
  name,
  status: 'not emulated',
  doc: `${what} is a C module${name === 'lsyslog' ? ' (syslog)' : ''}; it is not emulated`,
  ops: [],
})

export const LIBRARY_MODULES: readonly LuaModule[] = [
  {
    name: 'cjson',
    status: 'emulated',
    doc: "lua-cjson with Kong's rules: `\\/`, `{}` for an empty table, `cjson.empty_array`, bytes that are not UTF-8 copied as they are",
    ops: ['json_decode', 'json_encode', 'null'],
  },
  { name: 'cjson.safe', status: 'emulated', doc: '`cjson` answering `nil, err` instead of raising', ops: [] },
  {
    name: 'string.buffer',
    status: 'emulated',
    doc: "LuaJIT's string buffer in Lua (a table, not userdata); `encode`, `decode` and the FFI-only methods raise",
    ops: [],
  },
  {
    name: 'bit',
    status: 'emulated',
    doc: "LuaJIT's BitOp (also a global)",
    files: ['broker/prelude.lua'],
    ops: [],
  },
  {
    name: 'jit',
    status: 'emulated',
    doc: 'the module and global; its compiler controls do nothing',
    files: ['broker/prelude.lua'],
    ops: [],
  },
  tableExtension('new', 'a table (the sizes are hints)'),
  tableExtension('clear', 'empties a table in place'),
  tableExtension('isempty', 'whether a table has no key'),
  tableExtension('nkeys', 'the number of keys'),
  tableExtension('clone', 'a shallow copy'),
  tableExtension('isarray', 'whether the keys are 1..n'),
  {
    name: 'io',
    status: 'emulated',
    doc: "`io.open` and `io.lines` read the host's files (relative paths from the fixture's folder); in a replay a write mode, `os.remove` and `os.rename` answer `nil, err`; under `broker pdk test` they write the host's files and `os.tmpname` makes `/tmp/lua_XXXXXX`",
    files: ['broker/io.lua'],
    ops: ['fs_close', 'fs_open', 'fs_pread', 'fs_pwrite', 'fs_read', 'fs_remove', 'fs_rename', 'fs_size', 'fs_tmpname'],
  },
  {
    name: 'lfs',
    status: 'emulated',
    doc: "LuaFileSystem's queries (`attributes`, `dir`, `currentdir`); a change answers `nil, err`, but for `mkdir` and `rmdir` under `broker pdk test`",
    ops: ['fs_cwd', 'fs_list', 'fs_mkdir', 'fs_rmdir', 'fs_stat'],
  },
  {
    name: 'luatz',
    status: 'emulated',
    doc: 'in UTC (`time` reads `ngx.now`); the time-zone functions raise an error naming themselves',
    ops: [],
  },
  { name: 'luatz.timetable', status: 'emulated', doc: 'broken-down times, `normalise`, `rfc_3339`', ops: [] },
  {
    name: 'luatz.parse',
    status: 'emulated',
    doc: '`rfc_3339`: the timetable as written and the time zone offset in seconds (also `luatz.parse`)',
    ops: [],
  },
  {
    name: 'socket',
    status: 'emulated',
    doc: "LuaSocket's clock (`gettime`, `sleep`) and version (also the global `socket`)",
    onUse:
      "LuaSocket's sockets are not emulated, a replay opens no connection (socket.gettime, socket.url and socket.http are)",
    ops: ['now', 'sleep'],
  },
  {
    name: 'socket.http',
    status: 'emulated',
    doc: 'answered from the fixture\'s `"outbound"`, as `resty.http` is',
    onUse:
      'a replay opens no connection: socket.http is answered from the fixture\'s "outbound" list, which this fixture does not have; add one (docs/fixture-format.md)',
    ops: ['http_enabled', 'http_send'],
  },
  { name: 'socket.url', status: 'emulated', doc: 'RFC 3986 parsing and escaping', ops: [] },
  {
    name: 'mime',
    status: 'emulated',
    doc: "LuaSocket's `b64`/`unb64` and `qp`/`unqp`; its ltn12 filters (`encode`, `decode`, `wrap`, …) raise an error naming themselves",
    ops: [],
  },
  {
    name: 'socket.core',
    status: 'not emulated',
    doc: "LuaSocket's C core is not emulated (socket.gettime, socket.url and socket.http are)",
    ops: [],
  },
  {
    name: 'socket.ftp',
    status: 'not emulated',
    doc: 'FTP is not emulated (socket.http is, answered from the fixture\'s "outbound")',
    ops: [],
  },
  {
    name: 'socket.smtp',
    status: 'not emulated',
    doc: 'SMTP is not emulated (socket.http is, answered from the fixture\'s "outbound")',
    ops: [],
  },
  {
    name: 'ssl.https',
    status: 'emulated',
    doc: 'LuaSec\'s `https` module, answered from the fixture\'s `"outbound"`',
    onUse:
      'a replay opens no connection: ssl.https is answered from the fixture\'s "outbound" list, which this fixture does not have; add one (docs/fixture-format.md)',
    ops: [],
  },
  {
    name: 'ssl',
    status: 'not emulated',
    doc: 'LuaSec is not emulated (socket.http answers https URLs from the fixture\'s "outbound")',
    ops: [],
  },
  {
    name: 'ltn12',
    status: 'fallback',
    doc: "LuaSocket's sources, sinks and filters (also the global `ltn12`)",
    ops: [],
  },
  {
    name: 'multipart',
    status: 'fallback',
    doc: "lua-multipart's interface (`get`, `get_all`, `get_as_array`, `set_simple`, `delete`, `tostring`)",
    ops: [],
  },
  {
    name: 'inspect',
    status: 'fallback',
    doc: "the inspect rock's `inspect(value)`: a readable rendering (sorted keys, cycles shown), as Kong's test plugins print",
    ops: [],
  },
  {
    name: 'version',
    status: 'fallback',
    doc: 'the version rock: a dotted version that compares part by part (`version(text)`, `version.new`)',
    ops: [],
  },
  {
    name: 'pgmoon.json',
    status: 'fallback',
    doc: "pgmoon's `encode_json` (a value as a quoted JSON SQL literal) and `decode_json`, which Kong's specs require",
    ops: [],
  },
  {
    name: 'ffi',
    status: 'emulated',
    doc: "LuaJIT's FFI as Kong's plugins use it: `ffi.cdef` remembers what it declares; `ffi.C` backs `open`, `write`, `close` and `strerror` on the host's files (file-log; a replay opens none to write, `broker pdk test` does); `ffi.new`, `typeof`, `cast`, `sizeof`, `string`, `errno` for numbers, arrays and pointers; `os`, `arch`, `abi` of Linux x64",
    onUse:
      "broker's ffi backs only open, write, close and strerror; other C functions, ffi.load's libraries, structs and ffi.metatype are not emulated: test that part of the plugin with a real Kong, or put a stub module of your own for the module that calls it on lua_path",
    ops: ['ffi_close', 'ffi_open', 'ffi_strerror', 'ffi_write'],
  },
  cModule('lpeg', 'LPeg'),
  cModule('pb', 'lua-protobuf'),
  cModule('lsyslog', 'lsyslog'),
  {
    name: 'lua_pack',
    status: 'emulated',
    doc: "Kong's lpack (a C module in Kong's build) on Lua 5.4's `string.pack`: `pack` and `unpack` with lpack's codes, as on x86-64",
    ops: [],
  },
  {
    name: 'argon2',
    status: 'not emulated',
    doc: "lua-argon2 is a C module with no node:crypto counterpart on Node 20 (Kong 3's oauth2 leaves it off and hashes client secrets with PBKDF2, through resty.openssl.kdf); it is not emulated",
    ops: [],
  },
  {
    name: 'bcrypt',
    status: 'not emulated',
    doc: "lua-bcrypt is a C module with no node:crypto counterpart (Kong 3's oauth2 leaves it off); it is not emulated",
    ops: [],
  },
  {
    name: 'lua_system_constants',
    status: 'emulated',
    doc: "a C module of Kong's build: open(2)'s flags and mode bits (`O_CREAT()`, `S_IRUSR()`, …) as Linux on x86-64 numbers them, for `ffi.C.open`",
    ops: [],
  },
  {
    name: 'protoc',
    status: 'not emulated',
    doc: "lua-protobuf's .proto compiler, whose core (pb) is a C module broker does not emulate: installing the rock does not help",
    ops: [],
  },
  {
    name: 'ffi-zlib',
    status: 'not emulated',
    doc: "FFI over zlib; kong.tools.gzip (inflate_gzip, deflate_gzip) is emulated on Node's zlib",
    ops: [],
  },
  {
    name: 'resty.aws',
    status: 'fallback',
    doc: 'lua-resty-aws: an instance keeps its config and static credentials answer `get()`; any AWS service or other credential provider stops the run naming it',
    onUse:
      "AWS is not emulated, no connection to it is opened: a plugin's AWS service calls (Lambda, Bedrock, Secrets Manager …) cannot run; put a lua-resty-aws of your own on --lua-path to use one",
    ops: [],
  },
  {
    name: 'resty.aws.config',
    status: 'fallback',
    doc: "lua-resty-aws's configuration from the environment (`global`, `get_config`, `get_region`); no ~/.aws files, no metadata service",
    ops: [],
  },
  {
    name: 'resty.aws.request.sign',
    status: 'fallback',
    doc: 'loads, so a plugin that requires it for a provider the fixture does not use runs (ai-proxy for Bedrock)',
    onUse:
      'AWS request signing is not emulated: a plugin that signs AWS requests (ai-proxy with Bedrock) cannot run its calls; put a lua-resty-aws of your own on --lua-path',
    ops: [],
  },
  {
    name: 'resty.gcp.request.credentials.accesstoken',
    status: 'fallback',
    doc: 'loads, so a plugin that requires it for a provider the fixture does not use runs (the AI plugins for Gemini on Vertex)',
    onUse:
      'Google Cloud authentication is not emulated, no connection to Google is opened: a service account token (gcp_use_service_account) cannot be fetched',
    ops: [],
  },
]
