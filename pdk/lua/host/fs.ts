/**
 * Reading real files for io.open, io.lines and lfs (Penlight's pl.file and pl.path sit on them): a plugin is its
 * author's own trusted code, and a key or template it was configured with is a file on disk. Relative paths
 * start at the fixture's folder (a spec's: the spec file's). Changes to files are fs-write.ts's.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { isAbsolute, resolve } from 'node:path'
import { bytesOf } from './codec.js'
import type { HostOp, HostState } from './types.js'

/** The user Kong's nginx workers run as when started by root (`nobody`, when nginx's `user` names no other). */
export const NOBODY = 65534

/**
 * Whether broker runs as root. Then a file Lua makes (a plugin's ffi open, io.open of a new path, os.tmpname) is
 * given to NOBODY: Kong's workers would own what they make, and Kong's CI runs a spec as the workers' user, so a file
 * a spec makes is one file-log may write (ffi.ts opens for a worker only where NOBODY may).
 */
export const asRoot = (): boolean => process.getuid?.() === 0

/** The C library's words for an errno, as io.open and LuaFileSystem report it. */
const STRERROR: Record<string, [string, number]> = {
  ENOENT: ['No such file or directory', 2],
  EACCES: ['Permission denied', 13],
  EISDIR: ['Is a directory', 21],
  ENOTDIR: ['Not a directory', 20],
  ELOOP: ['Too many levels of symbolic links', 40],
  EBADF: ['Bad file descriptor', 9],
  EEXIST: ['File exists', 17],
  ENOTEMPTY: ['Directory not empty', 39],
  EXDEV: ['Invalid cross-device link', 18],
  EPERM: ['Operation not permitted', 1],
  EBUSY: ['Device or resource busy', 16],
  ENOSPC: ['No space left on device', 28],
  EROFS: ['Read-only file system', 30],
  EINVAL: ['Invalid argument', 22],
}

/** errno of a Node error (EIO for one the table does not know), as C's functions set it. */
export const errnoOf = (e: unknown): number => STRERROR[(e as NodeJS.ErrnoException).code ?? '']?.[1] ?? 5

const BY_ERRNO = new Map(Object.values(STRERROR).map(([text, n]) => [n, text]))
BY_ERRNO.set(5, 'Input/output error')

/** C's strerror: glibc's words for an errno (`Unknown error <n>` for one the table does not know). */
export const strerror = (n: number): string => BY_ERRNO.get(n) ?? `Unknown error ${n}`

/** A Lua path on the host: relative ones from the fixture's folder, for reads and writes alike. */
export const pathOf = (s: HostState, p: unknown): string => {
  const text = bytesOf(p).toString('utf8')
  return isAbsolute(text) ? text : resolve(s.baseDir ?? process.cwd(), text)
}

/** `[undefined, "<path>: <strerror>", errno]`, Lua's failure triple (without a path: a handle's read or write). */
export function failure(p: unknown, e: unknown): unknown[] {
  const code = (e as NodeJS.ErrnoException).code ?? ''
  const [text, errno] = STRERROR[code] ?? [(e as Error).message, 5]
  return [undefined, p === undefined ? text : `${bytesOf(p).toString('utf8')}: ${text}`, errno]
}

export const FS_OPS: Record<string, HostOp> = {
  /** path → its bytes, or nil, message, errno. */
  fs_read: (s, p) => {
    try {
      return [readFileSync(pathOf(s, p))]
    } catch (e) {
      return failure(p, e)
    }
  },
  /** path → LuaFileSystem's attributes table, or nil, message, errno. */
  fs_stat: (s, p) => {
    try {
      const st = statSync(pathOf(s, p))
      const mode = st.isFile()
        ? 'file'
        : st.isDirectory()
          ? 'directory'
          : st.isSymbolicLink()
            ? 'link'
            : st.isSocket()
              ? 'socket'
              : st.isFIFO()
                ? 'named pipe'
                : st.isCharacterDevice()
                  ? 'char device'
                  : 'block device'
      const perms = (st.mode & 0o777).toString(2).padStart(9, '0')
      const permissions = [...perms].map((b, i) => (b === '1' ? 'rwx'[i % 3] : '-')).join('')
      return [
        {
          mode,
          size: st.size,
          modification: Math.floor(st.mtimeMs / 1000),
          access: Math.floor(st.atimeMs / 1000),
          change: Math.floor(st.ctimeMs / 1000),
          dev: st.dev,
          ino: st.ino,
          nlink: st.nlink,
          uid: st.uid,
          gid: st.gid,
          rdev: st.rdev,
          blocks: st.blocks,
          blksize: st.blksize,
          permissions,
        },
      ]
    } catch (e) {
      return failure(p, e)
    }
  },
  /** folder → its entries (with "." and ".." first, as LuaFileSystem's dir gives them), or nil, message. */
  fs_list: (s, p) => {
    try {
      return [['.', '..', ...readdirSync(pathOf(s, p))]]
    } catch (e) {
      return failure(p, e)
    }
  },
  fs_cwd: (s) => [s.baseDir ?? process.cwd()],
}
