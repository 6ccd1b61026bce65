/**
 * Where `require` finds Lua modules: the modules broker writes (C, FFI or OpenResty underneath in
 * Kong, so they win over same-named files), then the plugin's own root, the fixture's `lua_path`,
 * `--lua-path`, `LUA_PATH` templates, the system Lua folders, and last broker's fallbacks
 * (resty.redis, resty.http), which any of those overrides.
 */
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { dropLuajitLiterals } from './luajit-syntax.js'

const HERE = dirname(fileURLToPath(import.meta.url))

/** The folder of broker's own Lua modules (beside the sources; a build copies only .ts). */
export const LIB_DIR = [join(HERE, 'lib'), resolve(HERE, '../../../pdk/lua/lib')].find((d) => existsSync(d))!

/**
 * broker's modules that a file on a Lua root or in the system folders overrides: they are searched
 * last, so a stub (or the real library) of the user's own wins.
 */
export const FALLBACK_DIR = join(LIB_DIR, 'fallback')

/** Folders a Debian or luarocks Lua 5.1 install puts pure-Lua modules in (Penlight resolves there). */
export const SYSTEM_DIRS = ['/usr/local/share/lua/5.1', '/usr/share/lua/5.1']

/**
 * Modules a plugin may require that broker does not emulate, with what to do instead: requiring
 * one fails the fixture at once rather than at some later call.
 */
export const NOT_EMULATED: Record<string, string> = {
  ffi: 'LuaJIT FFI has no equivalent on the Lua 5.4 VM broker runs',
  'resty.openssl':
    'of the OpenSSL bindings broker emulates resty.openssl (the root), digest, mac, hmac, pkey, cipher, kdf and rand',
  'resty.openssl.bn': 'big numbers are not emulated',
  'ngx.socket': 'sockets are not emulated',
  'socket.core': "LuaSocket's C core is not emulated (socket.gettime, socket.url and socket.http are)",
  'socket.ftp': 'FTP is not emulated (socket.http is, answered from the fixture\'s "outbound")',
  'socket.smtp': 'SMTP is not emulated (socket.http is, answered from the fixture\'s "outbound")',
  ssl: 'LuaSec is not emulated (socket.http answers https URLs from the fixture\'s "outbound")',
  'resty.mlcache': 'use kong.cache, which is emulated',
  'resty.dns.resolver': 'DNS is not emulated',
  lpeg: 'LPeg is a C module; it is not emulated',
  // OpenResty's own core modules: C and FFI inside nginx, not rocks one could install
  'ngx.balancer':
    'an OpenResty core module (the balancer inside nginx); a replay connects nowhere: kong.service.set_target and ngx.ctx.balancer_data are emulated',
  'ngx.ssl': 'an OpenResty core module (TLS inside nginx); kong.client.tls is emulated',
  'ngx.ocsp': 'an OpenResty core module (OCSP inside nginx); not emulated',
  'ngx.errlog': "an OpenResty core module (nginx's error log); kong.log is emulated",
  'ngx.process': "an OpenResty core module (nginx's processes); a replay runs one worker",
  'ngx.pipe': 'an OpenResty core module (child processes); a replay starts none',
  'ngx.semaphore': 'an OpenResty core module (light threads waiting on each other); a replay runs one request',
  'ngx.resp': 'an OpenResty core module; ngx.header and kong.response are emulated',
  'resty.core': 'an OpenResty core module (FFI inside nginx); broker answers its APIs through ngx.*',
  // what Kong 3.x no longer has
  'kong.plugins.base_plugin':
    'Kong 3.0 removed it: a handler is a plain table since; this plugin was written for Kong 2.x (put a base_plugin.lua of Kong 2.8 on lua_path to try it anyway)',
  // C modules and FFI bindings that come with Kong's build
  pb: 'lua-protobuf is a C module; it is not emulated',
  lsyslog: 'lsyslog is a C module (syslog); it is not emulated',
  lua_pack: 'lua_pack is a C module; it is not emulated',
  'ffi-zlib': "FFI over zlib; kong.tools.gzip (inflate_gzip, deflate_gzip) is emulated on Node's zlib",
  'resty.openssl.x509': 'X.509 certificates are not emulated (resty.openssl.pkey reads PEM, DER and JWK keys)',
}

/**
 * Modules (and `ngx` fields) that load, so a plugin that requires them for a feature the fixture
 * does not use still runs, but whose use fails the fixture: what to do instead.
 */
export const NOT_EMULATED_IN_USE: Record<string, string> = {
  'resty.redis':
    'Redis is not emulated, a replay opens no connection: a redis policy (rate-limiting\'s policy "redis") cannot run; policy "local" can',
  'resty.http':
    'a replay opens no connection: resty.http is answered from the fixture\'s "outbound" list, which this fixture does not have; add one (docs/fixture-format.md), or put a stub resty.http of your own on lua_path',
  'ngx.socket': 'sockets are not emulated, a replay opens no connection',
  'socket.http':
    'a replay opens no connection: socket.http is answered from the fixture\'s "outbound" list, which this fixture does not have; add one (docs/fixture-format.md)',
  socket:
    "LuaSocket's sockets are not emulated, a replay opens no connection (socket.gettime, socket.url and socket.http are)",
  'ssl.https':
    'a replay opens no connection: ssl.https is answered from the fixture\'s "outbound" list, which this fixture does not have; add one (docs/fixture-format.md)',
}

/** Whether `name` (or the package it is part of) is known to be unemulated; its hint. */
export function notEmulated(name: string): string | undefined {
  for (let n = name; n; n = n.includes('.') ? n.slice(0, n.lastIndexOf('.')) : '') {
    if (Object.hasOwn(NOT_EMULATED, n)) return NOT_EMULATED[n]
    if (!n.includes('.')) break
  }
  return undefined
}

export interface Found {
  file: string
  /** The file as tracebacks name it: relative to its root (`kong/plugins/x/handler.lua`). */
  shown: string
  source: Buffer
}

/** `?`-templates for a folder: `a/b.lua` and `a/b/init.lua`. */
const templates = (dir: string): string[] => [join(dir, '?.lua'), join(dir, '?', 'init.lua')]

/** Lua's `LUA_PATH` (`;`-separated templates, `;;` for the defaults). */
export function luaPathTemplates(value: string | undefined): string[] {
  if (!value) return []
  return value.split(';').filter((t) => t !== '' && t.includes('?'))
}

/** The search path of one runtime: emulated modules first, then the roots in order. */
export class ModuleFinder {
  private readonly paths: string[]
  private readonly cache = new Map<string, Found | string[]>()

  constructor(roots: readonly string[], extraTemplates: readonly string[] = []) {
    this.paths = [
      ...templates(LIB_DIR),
      ...roots.flatMap(templates),
      ...extraTemplates,
      ...SYSTEM_DIRS.flatMap(templates),
      ...templates(FALLBACK_DIR),
    ]
  }

  /** The module's file and source, or the files tried. */
  find(name: string): Found | string[] {
    let hit = this.cache.get(name)
    if (hit) return hit
    const rel = name.replace(/\./g, '/')
    const tried: string[] = []
    for (const t of this.paths) {
      const file = t.replace(/\?/g, rel)
      tried.push(file)
      try {
        hit = { file, shown: file.slice(t.indexOf('?')), source: dropLuajitLiterals(readFileSync(file)) }
        break
      } catch {
        // not there: the next template
      }
    }
    hit ??= tried
    this.cache.set(name, hit)
    return hit
  }
}
