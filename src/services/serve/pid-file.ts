import { constants } from 'node:fs'
import { lstat, open, rm } from 'node:fs/promises'
import { lazyBrokerError, lazyIsBrokerError } from '../../errors/lazy.js'

/** A pid file this process wrote; release() removes it unless another process has taken it since. */
export interface PidFile {
  readonly file: string
  release(): Promise<void>
}

/** Whether a process with this pid runs (EPERM: it runs under another user). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}

// Never through a symlink: pid.dir may be writable by others (/tmp, a shared run dir), and a link
// planted as .broker.pid would make serve overwrite (or delete) whatever it points at.
const NOFOLLOW = constants.O_NOFOLLOW

async function pidIn(file: string): Promise<number | undefined> {
  const text = await open(file, constants.O_RDONLY | NOFOLLOW)
    .then(async (fh) => (await fh.readFile('utf8').finally(() => fh.close())) as string)
    .catch(() => '')
  const pid = Number.parseInt(text.trim(), 10)
  return Number.isInteger(pid) && pid > 0 ? pid : undefined
}

/** Writes `pid` to `file` unless a live process other than `pid` is named there; a dead one's file is taken over. */
async function claim(file: string, pid: number): Promise<{ taken: true } | { taken: false; by: number }> {
  const { O_WRONLY, O_CREAT, O_EXCL } = constants
  // Exclusive create, then (a dead broker's file) a truncating open that refuses a link, and a
  // check of what was opened: a hard link to someone's file has more than one name.
  const write = async (flags: number) => {
    const fh = await open(file, flags | O_WRONLY | NOFOLLOW, 0o644)
    try {
      const stat = await fh.stat()
      if (!stat.isFile() || stat.nlink > 1) throw await lazyBrokerError('pidFileNotPlain', { file })
      await fh.truncate(0)
      await fh.writeFile(`${pid}\n`)
    } finally {
      await fh.close()
    }
  }
  const failed = async (err: unknown) => {
    const e = err as NodeJS.ErrnoException
    if (await lazyIsBrokerError(e)) return e
    return e.code === 'ELOOP'
      ? lazyBrokerError('pidFileNotPlain', { file })
      : lazyBrokerError('pidFileUnwritable', { file, reason: e.message })
  }
  try {
    await write(O_CREAT | O_EXCL)
    return { taken: true }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw await failed(err)
  }
  // O_EXCL fails on a symlink too (even a dangling one): say so rather than read through it.
  if ((await lstat(file).catch(() => undefined))?.isSymbolicLink())
    throw await lazyBrokerError('pidFileNotPlain', { file })
  const other = await pidIn(file)
  if (other !== undefined && other !== pid && alive(other)) return { taken: false, by: other }
  await write(0).catch(async (again: unknown) => {
    throw await failed(again)
  })
  return { taken: true }
}

/**
 * Writes this process's pid to `file`, never over a live broker's: two `serve` in one directory
 * used to share one pid file, the second overwriting it and the first deleting it on exit. When a
 * running broker holds `file`, this one writes `byPort` (the same name with its port) and
 * `onFallback` says so; when that too names a live broker, the start is refused.
 */
export async function claimPidFile(
  file: string,
  byPort: string,
  onFallback: (held: { file: string; pid: number; instead: string }) => void,
  pid = process.pid,
): Promise<PidFile> {
  let mine = file
  const first = await claim(file, pid)
  if (!first.taken) {
    const second = await claim(byPort, pid)
    if (!second.taken) throw await lazyBrokerError('pidFileInUse', { file: byPort, pid: second.by })
    onFallback({ file, pid: first.by, instead: byPort })
    mine = byPort
  }
  return {
    file: mine,
    release: async () => {
      // pidIn refuses a link, so a link planted since is never followed (rm removes a link, not its target).
      if ((await pidIn(mine)) === pid) await rm(mine, { force: true })
    },
  }
}
