import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { kitFor } from '../runner/harness.js'
import { LuaRuntime } from './runtime.js'

// io.open, io.lines and lfs read the host's files (a plugin's configured key or template), relative paths from
// the fixture's folder; nothing is written. A real temporary folder holds the fixture and its files.
const dir = mkdtempSync(join(tmpdir(), 'broker-lua-files-'))
mkdirSync(join(dir, 'keys'))
writeFileSync(join(dir, 'keys', 'private.pem'), '-----BEGIN KEY-----\nabc\n-----END KEY-----\n')
writeFileSync(join(dir, 'bytes.bin'), Buffer.from([0, 255, 10, 1]))
const rt = await LuaRuntime.bare(kitFor({}, 'access'), join(dir, 'fixture.json'))
afterAll(() => {
  rt.close()
  rmSync(dir, { recursive: true, force: true })
})
const lua = (code: string) => rt.vm.run(code, '=test')

describe('files a plugin reads', () => {
  it('io.open reads a file relative to the fixture, in the formats 5.1 and 5.4 name', () => {
    expect(
      lua(`local f = assert(io.open("keys/private.pem", "rb"))
           local first = f:read("*l")
           local rest = f:read("a")
           f:close()
           local lines = {}
           for l in io.lines("keys/private.pem") do lines[#lines + 1] = l end
           return first, rest, #lines, io.type(f)`),
    ).toEqual(['-----BEGIN KEY-----', 'abc\n-----END KEY-----\n', 3, 'closed file'])
  })

  it('keeps bytes as they are on disk', () => {
    expect(lua(`local f = io.open("bytes.bin") local s = f:read("*a") return #s, s:byte(1), s:byte(2)`)).toEqual([
      4, 0, 255,
    ])
  })

  it('answers a missing file as the C library does, and refuses to write', () => {
    const [none, err, errno, w, werr] = lua(`local a, b, c = io.open("keys/missing.pem")
      local d, e = io.open("out.txt", "w")
      return a, b, c, d, e`)
    expect([none, err, errno, w]).toEqual([undefined, 'keys/missing.pem: No such file or directory', 2, undefined])
    expect(werr).toBe('out.txt: Read-only file system (a replay writes no file)')
  })

  it("Penlight's pl.file and pl.path read through it, and lfs answers the attributes", () => {
    expect(
      lua(`local lfs = require "lfs"
           local names = {}
           for n in lfs.dir("keys") do names[#names + 1] = n end
           return lfs.attributes("keys", "mode"), lfs.attributes("bytes.bin").size, table.concat(names, ","),
             require("pl.path").exists("keys/private.pem") ~= false, #require("pl.file").read("keys/private.pem"),
             (select(2, lfs.mkdir("new")))`),
    ).toEqual(['directory', 4, '.,..,private.pem', true, 42, 'new: Read-only file system (a replay writes no file)'])
  })
})
