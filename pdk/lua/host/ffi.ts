/**
 * The C functions broker's `ffi` backs (ffi.lua): open, write, close and strerror on the host's files, as Kong's
 * file-log calls them. They answer as C does, a result or -1 with an errno, never an exception. Opening to write
 * follows io.open's rule (fs-write.ts): a replay writes no file (EROFS), `broker pdk test` writes the host's.
 */
import { closeSync, constants, fchownSync, openSync, statSync, writeSync, type Stats } from 'node:fs'
import { dirname } from 'node:path'
import { bytesOf } from './codec.js'
import { NOBODY, asRoot, errnoOf, pathOf, strerror } from './fs.js'
import { handle, keepOpen, release } from './fs-write.js'
import type { HostOp } from './types.js'

// open(2)'s flags as Lua passes them: the numbers of Linux on x86-64 (lua_system_constants.lua), the system Kong runs
// on, as Node's flags for this host. A bit not listed here is dropped, as Linux ignores flags it does not know.
const FLAGS: readonly [number, number | undefined][] = [
  [0o1, constants.O_WRONLY],
  [0o2, constants.O_RDWR],
  [0o100, constants.O_CREAT],
  [0o200, constants.O_EXCL],
  [0o400, constants.O_NOCTTY],
  [0o1000, constants.O_TRUNC],
  [0o2000, constants.O_APPEND],
  [0o4000, constants.O_NONBLOCK],
  [0o200000, constants.O_DIRECTORY],
  [0o400000, constants.O_NOFOLLOW],
]
const nodeFlags = (linux: number): number => FLAGS.reduce((n, [bit, own]) => (linux & bit ? n | (own ?? 0) : n), 0)
/** Whether the flags open to write or change the file (a replay refuses these). */
const changes = (linux: number): boolean => (linux & (0o3 | 0o100 | 0o1000 | 0o2000)) !== 0

const EACCES = 13
const EROFS = 30

/**
 * Kong's nginx workers never run as root: started by root, nginx drops them to its `user` (`kong`, else `nobody`).
 * When broker runs as root, a write is allowed only where `nobody` could make it, so a spec that aims file-log at
 * /etc/shadow to see it refused (Kong's own does) gets EACCES, as under Kong, and not a changed system file; a file
 * it creates is given to `nobody`, as the worker would own it.
 * Undefined: the kernel decides (it still answers ENOENT, EISDIR and the like).
 */
function deniedToWorker(path: string, create: boolean): number | undefined {
  if (!asRoot()) return undefined
  const st = statOf(path)
  if (st) return st.isDirectory() || nobodyMay(st, 0o2) ? undefined : EACCES
  const parent = create ? statOf(dirname(path)) : undefined
  return parent?.isDirectory() && !nobodyMay(parent, 0o3) ? EACCES : undefined
}

const statOf = (path: string): Stats | undefined => {
  try {
    return statSync(path)
  } catch {
    return undefined
  }
}
/** Whether `nobody` (no owner or group of the file but its own) has these permission bits. */
const nobodyMay = (st: Stats, bits: number): boolean => {
  const shift = st.uid === NOBODY ? 6 : st.gid === NOBODY ? 3 : 0
  return ((st.mode >> shift) & bits) === bits
}

export const FFI_OPS: Record<string, HostOp> = {
  /** path, flags (Linux's numbers), mode → a descriptor, or -1 and errno. */
  ffi_open: (s, p, flags, mode) => {
    const linux = Number(flags)
    if (changes(linux) && !s.writesFiles) return [-1, EROFS]
    const path = pathOf(s, p)
    // a path ending in / is a folder's, EISDIR from the kernel whether or not it exists
    const create = (linux & 0o100) !== 0 && !bytesOf(p).toString('utf8').endsWith('/')
    const denied = changes(linux) ? deniedToWorker(path, create) : undefined
    if (denied) return [-1, denied]
    const made = create && asRoot() && !statOf(path)
    try {
      const fd = openSync(path, nodeFlags(linux), Number(mode ?? 0) & 0o7777)
      // the worker that made it owns it, as under Kong (a root-owned 0644 file would refuse its next open)
      if (made) fchownSync(fd, NOBODY, NOBODY)
      keepOpen(s, fd, { append: (linux & 0o2000) !== 0, readable: (linux & 0o3) !== 0o1 })
      return [fd]
    } catch (e) {
      return [-1, errnoOf(e)]
    }
  },
  /** descriptor, bytes → how many were written (at the descriptor's position; O_APPEND's end), or -1 and errno. */
  ffi_write: (s, fd, data) => {
    try {
      const [n] = handle(s, fd)
      const bytes = bytesOf(data)
      let done = 0
      while (done < bytes.length) done += writeSync(n, bytes, done, bytes.length - done)
      return [done]
    } catch (e) {
      return [-1, errnoOf(e)]
    }
  },
  /** descriptor → 0, or -1 and errno (EBADF for one this runtime did not open). */
  ffi_close: (s, fd) => {
    try {
      const [n] = handle(s, fd)
      release(s, n)
      closeSync(n)
      return [0]
    } catch (e) {
      return [-1, errnoOf(e)]
    }
  },
  /** errno → glibc's words for it. */
  ffi_strerror: (_s, n) => [strerror(Number(n))],
}
