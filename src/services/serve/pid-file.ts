import { readFile, rm, writeFile } from 'node:fs/promises'
import { brokerError } from '../../errors/index.js'

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

async function pidIn(file: string): Promise<number | undefined> {
  const text = await readFile(file, 'utf8').catch(() => '')
  const pid = Number.parseInt(text.trim(), 10)
  return Number.isInteger(pid) && pid > 0 ? pid : undefined
}

/** Writes `pid` to `file` unless a live process other than `pid` is named there; a dead one's file is taken over. */
async function claim(file: string, pid: number): Promise<{ taken: true } | { taken: false; by: number }> {
  const write = (flag: 'wx' | 'w') => writeFile(file, `${pid}\n`, { flag })
  try {
    await write('wx')
    return { taken: true }
  } catch (err) {
    const e = err as NodeJS.ErrnoException
    if (e.code !== 'EEXIST') throw brokerError('pidFileUnwritable', { file, reason: e.message })
  }
  const other = await pidIn(file)
  if (other !== undefined && other !== pid && alive(other)) return { taken: false, by: other }
  await write('w').catch((again: Error) => {
    throw brokerError('pidFileUnwritable', { file, reason: again.message })
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
    if (!second.taken) throw brokerError('pidFileInUse', { file: byPort, pid: second.by })
    onFallback({ file, pid: first.by, instead: byPort })
    mine = byPort
  }
  return {
    file: mine,
    release: async () => {
      if ((await pidIn(mine)) === pid) await rm(mine, { force: true })
    },
  }
}
