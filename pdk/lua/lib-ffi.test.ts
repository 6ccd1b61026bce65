import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { kitFor } from '../runner/harness.js'
import { LuaRuntime } from './runtime.js'

// broker's `ffi` (lib/ffi.lua, host/ffi.ts): what Kong's file-log calls (open, write, close, strerror, errno) on the
// host's files under `broker pdk test`, nothing written in a replay, and any other C function declared with
// ffi.cdef stopping the run by name when called. A real temporary folder holds the files.
const dir = mkdtempSync(join(tmpdir(), 'broker-lua-ffi-'))
// writable by anyone, as /tmp is: run as root, broker opens for Kong's worker where `nobody` could (host/ffi.ts)
chmodSync(dir, 0o777)
const fixture = join(dir, 'fixture.json')
const spec = await LuaRuntime.bare(kitFor({}, 'log'), fixture, { writesFiles: true })
const replay = await LuaRuntime.bare(kitFor({}, 'log'), fixture)
afterAll(() => {
  spec.close()
  replay.close()
  rmSync(dir, { recursive: true, force: true })
})
const at = (name: string) => join(dir, name)

// file-log's way: the flags from lua_system_constants, the mode an ffi.new("int") cdata, no cdef of its own
const FILE_LOG = `
local ffi = require "ffi"
local sc = require "lua_system_constants"
local flags = bit.bor(sc.O_WRONLY(), sc.O_CREAT(), sc.O_APPEND())
local mode = ffi.new("int", bit.bor(sc.S_IRUSR(), sc.S_IWUSR(), sc.S_IRGRP(), sc.S_IROTH()))
function append(path, line)
  local fd = ffi.C.open(path, flags, mode)
  if fd < 0 then return nil, ffi.string(ffi.C.strerror(ffi.errno())), ffi.errno() end
  local n = ffi.C.write(fd, line, #line)
  return n, ffi.C.close(fd)
end`
spec.vm.run(FILE_LOG, '=file-log')
replay.vm.run(FILE_LOG, '=file-log')

describe('ffi.C as Kong declares it at start (file-log)', () => {
  it('appends to a file it creates with the mode asked for, relative to the fixture; write answers the count', () => {
    expect(spec.vm.run(`return append("log.jsonl", '{"a":1}\\n')`, '=t')).toEqual([8, 0])
    expect(spec.vm.run(`return append("log.jsonl", '{"b":2}\\n')`, '=t')).toEqual([8, 0])
    expect(readFileSync(at('log.jsonl'), 'utf8')).toBe('{"a":1}\n{"b":2}\n')
  })

  it("answers -1 and sets errno with C's words: a missing folder, a folder", () => {
    mkdirSync(at('dir'))
    expect(spec.vm.run(`return append("nodir/file", "x")`, '=t')).toEqual([undefined, 'No such file or directory', 2])
    expect(spec.vm.run(`return append("dir/", "x")`, '=t')).toEqual([undefined, 'Is a directory', 21])
  })

  it('a write or close on a descriptor that is not open is -1 with EBADF', () => {
    expect(
      spec.vm.run(
        `local ffi = require "ffi"
         local w = ffi.C.write(-1, "x", 1); local e1 = ffi.errno()
         local c = ffi.C.close(12345); local e2 = ffi.errno()
         return w, e1, c, e2`,
        '=t',
      ),
    ).toEqual([-1, 9, -1, 9])
  })

  it("run as root, writes only where nobody could, as Kong's workers run (not root): a root-only file is EACCES", () => {
    writeFileSync(at('root-only'), 'secret\n', { mode: 0o640 })
    writeFileSync(at('anyone'), '', { mode: 0o666 })
    chmodSync(at('root-only'), 0o640)
    chmodSync(at('anyone'), 0o666)
    const root = process.getuid?.() === 0
    expect(spec.vm.run(`return append("root-only", "x")`, '=t')).toEqual(
      root ? [undefined, 'Permission denied', 13] : [1, 0],
    )
    expect(readFileSync(at('root-only'), 'utf8')).toBe(root ? 'secret\n' : 'secret\nx')
    expect(spec.vm.run(`return append("anyone", "x")`, '=t')).toEqual([1, 0])
  })

  it('writes nothing in a replay: open is -1 with EROFS, the file is not made', () => {
    expect(replay.vm.run(`return append("replayed.jsonl", "x")`, '=t')).toEqual([
      undefined,
      'Read-only file system',
      30,
    ])
    expect(() => readFileSync(at('replayed.jsonl'))).toThrow(/ENOENT/)
  })

  it('opens read-only in a replay too (a read changes no file)', () => {
    writeFileSync(at('ro.txt'), 'x')
    expect(
      replay.vm.run(
        `local ffi = require "ffi"
         local fd = ffi.C.open("ro.txt", 0, 0)
         return fd >= 0, ffi.C.close(fd)`,
        '=t',
      ),
    ).toEqual([true, 0])
  })
})

describe('declarations, types and cdata', () => {
  it('a declared C function broker does not back stops the run naming it, even under pcall', () => {
    const rt = spec
    const [ok, err] = rt.vm.run(
      `local ffi = require "ffi"
       ffi.cdef[[
         typedef unsigned char u_char;
         int RAND_bytes(u_char *buf, int num); /* OpenSSL */
       ]]
       local f = ffi.C.RAND_bytes -- looking it up is fine, as a module's top level does
       return pcall(f, nil, 16)`,
      '=t',
    )
    expect(ok).toBe(false)
    expect(String(err)).toContain('ffi.C.RAND_bytes() is not emulated by broker')
    expect(rt.missingModule('', '$.plugins[0].module')?.message).toMatch(
      /calls ffi\.C\.RAND_bytes\(\) of "ffi", which broker does not emulate \(broker's ffi backs only open, write/,
    )
    rt.forgetUnsupportedCalls()
  })

  it("a symbol nobody declared is LuaJIT's error at the lookup; Kong's read is declared but not backed", () => {
    const [ok, err] = spec.vm.run(`return pcall(function() return require("ffi").C.getpid end)`, '=t')
    expect([ok, err]).toEqual([false, expect.stringContaining("missing declaration for symbol 'getpid'")])
    const [ok2, err2] = spec.vm.run(`return pcall(require("ffi").C.read, 0, nil, 1)`, '=t')
    expect([ok2, String(err2)]).toEqual([false, expect.stringContaining('ffi.C.read() is not emulated by broker')])
    spec.forgetUnsupportedCalls()
  })

  it('remembers typedefs, structs and enum constants; typeof refuses an undeclared type as LuaJIT does', () => {
    expect(
      spec.vm.run(
        `local ffi = require "ffi"
         local before = pcall(ffi.typeof, "ngx_uint_t")
         ffi.cdef[[
           typedef uintptr_t ngx_uint_t;
           struct point { int x; int y; };
           enum colour { RED, GREEN = 5, BLUE };
         ]]
         return before, pcall(ffi.typeof, "ngx_uint_t"), ffi.sizeof("ngx_uint_t"), ffi.C.GREEN, ffi.C.BLUE,
           tostring(ffi.typeof("struct point *"))`,
        '=t',
      ),
    ).toEqual([false, true, 8, 5, 6, 'ctype<struct point*>'])
  })

  it('new: numbers, zeroed arrays (index 0 up), char buffers read back with ffi.string; sizeof, istype', () => {
    expect(
      spec.vm.run(
        `local ffi = require "ffi"
         local n = ffi.new("int", 41)
         local arr = ffi.new("int[1]")
         arr[0] = 7
         local buf = ffi.typeof("char[?]")(3)
         buf[0], buf[1], buf[2] = 104, 105, 0
         return tonumber(n) + 1, n < 42, arr[0], ffi.string(buf), ffi.string(buf, 2), ffi.sizeof(buf),
           ffi.sizeof("int[4]"), ffi.istype("int", n), ffi.istype("long", n)`,
        '=t',
      ),
    ).toEqual([42, true, 7, 'hi', 'hi', 3, 16, true, false])
  })

  it('ffi.string of a Lua string, a cast string and with a length; os, arch and abi of Kong on Linux x64', () => {
    expect(
      spec.vm.run(
        `local ffi = require "ffi"
         return ffi.string("ab\\0cd"), ffi.string("abcd", 2), ffi.string(ffi.cast("const char *", "xyz")),
           ffi.os, ffi.arch, ffi.abi("64bit"), ffi.abi("le"), ffi.abi("win"), ffi.errno(4), ffi.errno()`,
        '=t',
      ),
    ).toEqual(['ab', 'ab', 'xyz', 'Linux', 'x64', true, true, false, expect.any(Number), 4])
  })

  it('what is not emulated stops the run by name: ffi.metatype, a struct made with ffi.new, ffi.load', () => {
    for (const [code, name] of [
      ['ffi.metatype("int", {})', 'ffi.metatype'],
      ['ffi.cdef("struct s { int a; };") ffi.new("struct s")', 'ffi.new("struct s")'],
      ['ffi.load("z").deflate()', 'ffi.load("z").deflate'],
    ]) {
      const [ok, err] = spec.vm.run(
        `local ffi = require "ffi" ffi.cdef("int deflate(void *s, int flush);")
         return pcall(function() ${code} end)`,
        '=t',
      )
      expect([ok, String(err)]).toEqual([false, expect.stringContaining(`${name}() is not emulated by broker`)])
      spec.forgetUnsupportedCalls()
    }
  })
})
