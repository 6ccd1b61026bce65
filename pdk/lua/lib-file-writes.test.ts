import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { loadFixture } from '../fixture/index.js'
import { kitFor } from '../runner/harness.js'
import { runScenario } from '../runner/index.js'
import { preparePlugins } from '../runner/plugins.js'
import { LuaRuntime } from './runtime.js'

// Under `broker pdk test` (the host's writesFiles flag) io.open's write modes, os.tmpname, os.remove, os.rename and
// lfs.mkdir/rmdir act on the host's files as busted under Kong would; a replay (`pdk run`) still writes nothing.
// A real temporary folder holds the fixture and its files.
const dir = mkdtempSync(join(tmpdir(), 'broker-lua-writes-'))
const spec = await LuaRuntime.bare(kitFor({}, 'access'), join(dir, 'fixture.json'), { writesFiles: true })
const replay = await LuaRuntime.bare(kitFor({}, 'access'), join(dir, 'fixture.json'))
afterAll(() => {
  spec.close()
  replay.close()
  rmSync(dir, { recursive: true, force: true })
})
const lua = (code: string) => spec.vm.run(code, '=test')
const at = (name: string) => join(dir, name)

describe('files a spec writes', () => {
  it('"wb" creates the file relative to the fixture; write returns the file (LuaJIT 5.2 compat), close puts it on disk', () => {
    expect(
      lua(`local f = assert(io.open("made.bin", "wb"))
           local same = f:write("a\\0b", 42, "\\n") == f
           return same, f:close(), io.type(f)`),
    ).toEqual([true, true, 'closed file'])
    expect(readFileSync(at('made.bin'))).toEqual(Buffer.from('a\0b42\n'))
  })

  it("as root, a file io.open makes is the user's Kong's workers run as; a file that was there keeps its owner", () => {
    writeFileSync(at('kept.txt'), 'x')
    lua(`assert(io.open("new-owner.txt", "w")):close() assert(io.open("kept.txt", "w")):close()`)
    const root = process.getuid?.() === 0
    const owner = (name: string) => [statSync(at(name)).uid, statSync(at(name)).gid]
    expect(owner('new-owner.txt')).toEqual(root ? [65534, 65534] : [process.getuid?.(), process.getgid?.()])
    expect(owner('kept.txt')).toEqual([process.getuid?.(), process.getgid?.()])
  })

  it('"w" truncates at open; flush puts what was written on disk before close', () => {
    writeFileSync(at('trunc.txt'), 'old content')
    lua(`__t = assert(io.open("trunc.txt", "w"))`)
    expect(statSync(at('trunc.txt')).size).toBe(0)
    lua(`__t:write("new") __t:flush()`)
    expect(readFileSync(at('trunc.txt'), 'utf8')).toBe('new')
    lua(`__t:close()`)
  })

  it('"a" appends; "r+" writes in place; "w+" reads back what it wrote with seek, read and lines', () => {
    writeFileSync(at('log.txt'), 'one\n')
    writeFileSync(at('place.txt'), 'hello world')
    expect(
      lua(`local a = assert(io.open("log.txt", "a")) a:write("two\\n") a:close()
           local r = assert(io.open("place.txt", "r+")) r:write("HE") local rest = r:read("*a") r:close()
           local w = assert(io.open("wplus.txt", "w+"))
           w:write("x1\\ny2\\n")
           local size = w:seek("end")
           w:seek("set")
           local first = w:read("*l")
           local lines = {}
           for l in w:lines() do lines[#lines + 1] = l end
           w:close()
           return rest, size, first, table.concat(lines, ",")`),
    ).toEqual(['llo world', 6, 'x1', 'y2'])
    expect(readFileSync(at('log.txt'), 'utf8')).toBe('one\ntwo\n')
    expect(readFileSync(at('place.txt'), 'utf8')).toBe('HEllo world')
  })

  it("answers failures with Lua's triple: a missing file for r+, a folder, a read of a write-only file", () => {
    mkdirSync(at('folder'), { recursive: true })
    expect(
      lua(`local a, b, c = io.open("nothere.txt", "r+")
           local d, e, f = io.open("folder", "w")
           local w = assert(io.open("wonly.txt", "w"))
           local g, h, i = w:read("*a")
           w:close()
           return a, b, c, d, e, f, g, h, i`),
    ).toEqual([
      undefined,
      'nothere.txt: No such file or directory',
      2,
      undefined,
      'folder: Is a directory',
      21,
      undefined,
      'Bad file descriptor',
      9,
    ])
  })

  it('os.tmpname makes a new empty file in /tmp and returns its path', () => {
    const [a, b] = lua(`return os.tmpname(), os.tmpname()`) as [string, string]
    try {
      expect(a).toMatch(/^\/tmp\/lua_[A-Za-z0-9]{6}$/)
      expect(a).not.toBe(b)
      expect(statSync(a).size).toBe(0)
      // as root, the file is the user's Kong's workers run as (a spec's file-log aimed at it may write it)
      if (process.getuid?.() === 0) expect([statSync(a).uid, statSync(a).gid]).toEqual([65534, 65534])
    } finally {
      rmSync(a, { force: true })
      rmSync(b, { force: true })
    }
  })

  it("os.remove and os.rename act on the host's files with Lua's results", () => {
    writeFileSync(at('gone.txt'), 'x')
    writeFileSync(at('from.txt'), 'moved')
    mkdirSync(at('empty'), { recursive: true })
    mkdirSync(at('full'), { recursive: true })
    writeFileSync(at('full/x'), 'x')
    expect(
      lua(`return os.remove("gone.txt"), os.rename("from.txt", "to.txt"), os.remove("empty"),
             select(2, os.remove("gone.txt")), select(3, os.remove("gone.txt")),
             (select(2, os.rename("gone.txt", "x.txt"))), (select(2, os.remove("full")))`),
    ).toEqual([
      true,
      true,
      true,
      'gone.txt: No such file or directory',
      2,
      'gone.txt: No such file or directory',
      'full: Directory not empty',
    ])
    expect([existsSync(at('gone.txt')), existsSync(at('empty')), readFileSync(at('to.txt'), 'utf8')]).toEqual([
      false,
      false,
      'moved',
    ])
  })

  it("Penlight's pl.utils.writefile, pl.file.write, pl.path.tmpname, pl.dir.makepath and rmtree work", () => {
    expect(
      lua(`local utils, file, path, pdir = require "pl.utils", require "pl.file", require "pl.path", require "pl.dir"
           assert(utils.writefile("pl1.txt", "one"))
           assert(file.write("pl2.txt", "two"))
           local tmp = path.tmpname()
           assert(pdir.makepath("deep/er/est"))
           assert(file.write("deep/er/est/f.txt", "f"))
           local made = path.isdir("deep/er/est")
           assert(pdir.rmtree("deep"))
           local gone = not path.exists("deep")
           os.remove(tmp)
           return file.read("pl1.txt"), utils.readfile("pl2.txt"), tmp:match("^/tmp/lua_") ~= nil, made, gone`),
    ).toEqual(['one', 'two', true, true, true])
  })
})

describe('a replay writes no file', () => {
  it('refuses every write mode, os.remove, os.rename and os.tmpname; the disk is unchanged', () => {
    writeFileSync(at('keep.txt'), 'kept')
    const run = (code: string) => replay.vm.run(code, '=test')
    expect(
      run(`local out = {}
           for _, m in ipairs({ "w", "wb", "a", "r+", "w+", "a+", "rb+" }) do
             local f, err, errno = io.open("keep.txt", m)
             out[#out + 1] = tostring(f) .. "|" .. err .. "|" .. errno
           end
           return table.concat(out, "\\n")`),
    ).toEqual([
      ['w', 'wb', 'a', 'r+', 'w+', 'a+', 'rb+']
        .map(() => 'nil|keep.txt: Read-only file system (a replay writes no file)|30')
        .join('\n'),
    ])
    expect(run(`return os.remove("keep.txt")`)).toEqual([
      undefined,
      'keep.txt: Read-only file system (a replay writes no file)',
      30,
    ])
    expect(run(`return os.rename("keep.txt", "moved.txt")`)).toEqual([
      undefined,
      'keep.txt: Read-only file system (a replay writes no file)',
      30,
    ])
    expect(() => run(`return os.tmpname()`)).toThrow(/unable to generate a unique filename \(a replay writes no file\)/)
    expect(readFileSync(at('keep.txt'), 'utf8')).toBe('kept')
    expect(existsSync(at('moved.txt'))).toBe(false)
  })
})

describe('a `broker pdk run` replay of a plugin that writes', () => {
  it('runs the plugin through the runner with the files left as they were', async () => {
    mkdirSync(at('kong/plugins/scribe'), { recursive: true })
    writeFileSync(
      at('kong/plugins/scribe/handler.lua'),
      `return { PRIORITY = 10, VERSION = "1", access = function(_, conf)
  local _, open_err = io.open(conf.path, "a")
  local _, remove_err = os.remove(conf.path)
  local ok, tmp_err = pcall(os.tmpname)
  kong.response.set_header("x-open", open_err)
  kong.response.set_header("x-remove", remove_err)
  kong.response.set_header("x-tmpname", tostring(ok) .. " " .. tostring(tmp_err))
end }`,
    )
    writeFileSync(at('scribe.txt'), 'as it was')
    writeFileSync(
      at('scribe.json'),
      JSON.stringify({
        name: 'a plugin that writes',
        request: { url: 'http://api.test/' },
        plugins: [{ module: at('kong/plugins/scribe'), config: { path: 'scribe.txt' } }],
      }),
    )
    const fixture = loadFixture(at('scribe.json'))
    const r = await runScenario(fixture, await preparePlugins(fixture), {}, {})
    expect(r.failures).toEqual([])
    expect(r.response.headers['x-open']).toBe('scribe.txt: Read-only file system (a replay writes no file)')
    expect(r.response.headers['x-remove']).toBe('scribe.txt: Read-only file system (a replay writes no file)')
    expect(r.response.headers['x-tmpname']).toMatch(
      /^false .*unable to generate a unique filename \(a replay writes no file\)$/,
    )
    expect(readFileSync(at('scribe.txt'), 'utf8')).toBe('as it was')
  })
})
