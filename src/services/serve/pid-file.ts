import { readFile, rm, writeFile } from 'node:fs/promises'
import { brokerError } from '../../errors.js'

/** A pid file this process wrote; release() removes it unless another process has taken it since. */
export interface PidFile {
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

/**
 * Writes this process's pid to `file`, never over a live broker's: two `serve` in one directory
 * would otherwise share one pid file, the second overwriting it and the first deleting it on exit.
 * A pid file left by a process that is gone is taken over.
 */
export async function claimPidFile(file: string, pid = process.pid): Promise<PidFile> {
  const write = (flag: 'wx' | 'w') => writeFile(file, `${pid}\n`, { flag })
  try {
    await write('wx')
  } catch (err) {
    const e = err as NodeJS.ErrnoException
    if (e.code !== 'EEXIST') throw brokerError('pidFileUnwritable', { file, reason: e.message })
    const other = await pidIn(file)
    if (other !== undefined && other !== pid && alive(other)) throw brokerError('pidFileInUse', { file, pid: other })
    await write('w').catch((again: Error) => {
      throw brokerError('pidFileUnwritable', { file, reason: again.message })
    })
  }
  return {
    release: async () => {
      if ((await pidIn(file)) === pid) await rm(file, { force: true })
    },
  }
}
