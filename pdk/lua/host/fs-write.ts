/**
 * Changes to real files for io.open's write and update modes, os.tmpname/remove/rename and lfs.mkdir/rmdir (Penlight's
 * pl.file, pl.utils and pl.dir sit on them). A replay changes no file: each answers as a read-only filesystem would.
 * Under `broker pdk test` (the state's `writesFiles`) a spec writes files as busted under Kong does, and so do the
 * plugins of the Kong it started. Relative paths start where reads do (fs.ts).
 */
import {
  chownSync,
  closeSync,
  existsSync,
  fchownSync,
  fstatSync,
  mkdirSync,
  openSync,
  readSync,
  renameSync,
  rmdirSync,
  unlinkSync,
  writeSync,
} from 'node:fs'
import { randomInt } from 'node:crypto'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { bytesOf } from './codec.js'
import { NOBODY, asRoot, failure, pathOf } from './fs.js'
import type { HostOp, HostState } from './types.js'

/** What a replay answers for a change to the filesystem. */
const readOnly = (p: unknown): unknown[] => [
  undefined,
  `${bytesOf(p).toString('utf8')}: Read-only file system (a replay writes no file)`,
  30,
]

/** The files a runtime has open for writing, by descriptor: closed with the runtime if Lua left them open. */
export interface OpenFile {
  /** O_APPEND: every write at the end. */
  append: boolean
  /** An update mode (`+`): `w` and `a` alone are write-only, and reading them is EBADF as for a C stream. */
  readable: boolean
}
const openFiles = new WeakMap<HostState, Map<number, OpenFile>>()
const filesOf = (s: HostState) => {
  let files = openFiles.get(s)
  if (!files) openFiles.set(s, (files = new Map()))
  return files
}
/** Remembers a descriptor Lua holds (io.open's, or C's open through ffi.ts): closed with the runtime if Lua leaves it. */
export function keepOpen(s: HostState, fd: number, file: OpenFile): void {
  filesOf(s).set(fd, file)
}

/** Forgets a descriptor about to be closed. */
export function release(s: HostState, fd: number): void {
  filesOf(s).delete(fd)
}

/** An open handle's descriptor, or EBADF (closed, or never one of this runtime's). */
export function handle(s: HostState, fd: unknown): [number, OpenFile] {
  const n = Number(fd)
  const file = filesOf(s).get(n)
  if (!file) throw Object.assign(new Error('bad file descriptor'), { code: 'EBADF' })
  return [n, file]
}

/** Closes what a runtime's Lua left open (LuaRuntime.close). */
export function closeFiles(s: HostState): void {
  for (const fd of filesOf(s).keys()) closeSync(fd)
  openFiles.delete(s)
}

/** fopen's modes as Node's flags: the first letter, `+` anywhere after it (glibc ignores `b`); undefined is EINVAL. */
function flagsOf(mode: string): string | undefined {
  const kind = mode[0]
  if (kind !== 'r' && kind !== 'w' && kind !== 'a') return undefined
  return kind + (mode.includes('+', 1) ? '+' : '')
}

// LuaJIT's os.tmpname on POSIX: mkstemp on /tmp/lua_XXXXXX (TMPDIR is not read)
const TMP_DIR = process.platform === 'win32' ? tmpdir() : '/tmp'
const TMP_CHARS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'

export const FS_WRITE_OPS: Record<string, HostOp> = {
  /** path, fopen mode (a write or update mode) → a descriptor, or nil, message, errno; a replay refuses. */
  fs_open: (s, p, mode) => {
    if (!s.writesFiles) return readOnly(p)
    const flags = flagsOf(bytesOf(mode).toString('utf8'))
    if (!flags) return failure(p, { code: 'EINVAL' })
    try {
      const path = pathOf(s, p)
      const made = asRoot() && !existsSync(path)
      const fd = openSync(path, flags)
      if (made) fchownSync(fd, NOBODY, NOBODY)
      keepOpen(s, fd, { append: flags[0] === 'a', readable: flags.endsWith('+') })
      return [fd]
    } catch (e) {
      return failure(p, e)
    }
  },
  /** descriptor, position, count (-1: to the end) → the bytes there (empty at the end), or nil, message, errno. */
  fs_pread: (s, fd, pos, count) => {
    try {
      const [n, file] = handle(s, fd)
      if (!file.readable) return failure(undefined, { code: 'EBADF' })
      const at = Number(pos)
      const want = Number(count) < 0 ? Math.max(fstatSync(n).size - at, 0) : Number(count)
      const buf = Buffer.alloc(want)
      let got = 0
      while (got < want) {
        const r = readSync(n, buf, got, want - got, at + got)
        if (r === 0) break
        got += r
      }
      return [buf.subarray(0, got)]
    } catch (e) {
      return failure(undefined, e)
    }
  },
  /** descriptor, position, bytes → the position after them (an append-mode file's end), or nil, message, errno. */
  fs_pwrite: (s, fd, pos, data) => {
    try {
      const [n, file] = handle(s, fd)
      const bytes = bytesOf(data)
      // O_APPEND writes at the end whatever the position (pwrite on Linux too); the stream is then at the end
      const at = file.append ? fstatSync(n).size : Number(pos)
      let done = 0
      while (done < bytes.length) done += writeSync(n, bytes, done, bytes.length - done, at + done)
      return [file.append ? fstatSync(n).size : at + done]
    } catch (e) {
      return failure(undefined, e)
    }
  },
  /** descriptor → the file's size (seek "end"). */
  fs_size: (s, fd) => {
    try {
      return [fstatSync(handle(s, fd)[0]).size]
    } catch (e) {
      return failure(undefined, e)
    }
  },
  /** descriptor → true; the handle is gone. */
  fs_close: (s, fd) => {
    try {
      const [n] = handle(s, fd)
      release(s, n)
      closeSync(n)
      return [true]
    } catch (e) {
      return failure(undefined, e)
    }
  },
  /** → the path of a new empty file (mkstemp's /tmp/lua_XXXXXX), or nil and why not (os.tmpname raises it). */
  fs_tmpname: (s) => {
    if (!s.writesFiles) return [undefined, 'unable to generate a unique filename (a replay writes no file)']
    for (let i = 0; i < 100; i++) {
      const name = join(TMP_DIR, 'lua_' + Array.from({ length: 6 }, () => TMP_CHARS[randomInt(62)]).join(''))
      try {
        closeSync(openSync(name, 'wx', 0o600))
        if (asRoot()) chownSync(name, NOBODY, NOBODY)
        return [name]
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') break
      }
    }
    return [undefined, 'unable to generate a unique filename']
  },
  /** path → true, or nil, message, errno: C's remove(), which takes an empty folder too. */
  fs_remove: (s, p) => {
    if (!s.writesFiles) return readOnly(p)
    const path = pathOf(s, p)
    try {
      unlinkSync(path)
      return [true]
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code
      if (code !== 'EISDIR' && code !== 'EPERM') return failure(p, e)
      try {
        rmdirSync(path)
        return [true]
      } catch (e2) {
        return failure(p, e2)
      }
    }
  },
  /** from, to → true, or nil, "<from>: <strerror>", errno. */
  fs_rename: (s, from, to) => {
    if (!s.writesFiles) return readOnly(from)
    try {
      renameSync(pathOf(s, from), pathOf(s, to))
      return [true]
    } catch (e) {
      return failure(from, e)
    }
  },
  /** path → true, or nil, message, errno (LuaFileSystem's: no path in the message). */
  fs_mkdir: (s, p) => {
    if (!s.writesFiles) return readOnly(p)
    try {
      mkdirSync(pathOf(s, p))
      return [true]
    } catch (e) {
      return failure(undefined, e)
    }
  },
  /** path → true, or nil, message, errno, for an empty folder. */
  fs_rmdir: (s, p) => {
    if (!s.writesFiles) return readOnly(p)
    try {
      rmdirSync(pathOf(s, p))
      return [true]
    } catch (e) {
      return failure(undefined, e)
    }
  },
}
