import { spawn, spawnSync } from 'node:child_process'
import { existsSync, linkSync, lstatSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { claimPidFile } from './pid-file.js'

const dir = () => mkdtempSync(join(tmpdir(), 'broker-pid-'))
const sleepers: Array<{ kill(): void }> = []
/** The pid of a process that runs until the test ends. */
const livePid = () => {
  const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' })
  sleepers.push(child)
  return child.pid!
}
/** The pid of a process that has exited. */
const deadPid = () => spawnSync(process.execPath, ['-e', '0']).pid!

afterEach(() => sleepers.splice(0).forEach((c) => c.kill()))

describe('claimPidFile', () => {
  it('writes the pid and removes the file on release', async () => {
    const d = dir()
    const file = join(d, '.broker.pid')
    const pid = await claimPidFile(file, join(d, '.broker.3000.pid'), () => {}, 4242)
    expect(readFileSync(file, 'utf8')).toBe('4242\n')
    await pid.release()
    expect(existsSync(file)).toBe(false)
  })

  it('takes over a file left by a process that is gone', async () => {
    const d = dir()
    const file = join(d, '.broker.pid')
    writeFileSync(file, `${deadPid()}\n`)
    const pid = await claimPidFile(file, join(d, '.broker.3000.pid'), () => {}, 4242)
    expect(pid.file).toBe(file)
    expect(readFileSync(file, 'utf8')).toBe('4242\n')
  })

  it("never overwrites a live broker's file: names its own by port and says so", async () => {
    const d = dir()
    const file = join(d, '.broker.pid')
    const other = livePid()
    writeFileSync(file, `${other}\n`)
    const said: unknown[] = []
    const pid = await claimPidFile(file, join(d, '.broker.3001.pid'), (held) => said.push(held), 4242)
    expect(pid.file).toBe(join(d, '.broker.3001.pid'))
    expect(said).toEqual([{ file, pid: other, instead: join(d, '.broker.3001.pid') }])
    await pid.release()
    expect(readFileSync(file, 'utf8')).toBe(`${other}\n`)
    expect(existsSync(join(d, '.broker.3001.pid'))).toBe(false)
  })

  it('refuses when the port-named file is held by a live broker too', async () => {
    const d = dir()
    const file = join(d, '.broker.pid')
    writeFileSync(file, `${livePid()}\n`)
    writeFileSync(join(d, '.broker.3001.pid'), `${livePid()}\n`)
    await expect(claimPidFile(file, join(d, '.broker.3001.pid'), () => {}, 4242)).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
    })
  })

  it('leaves a file another process took over since', async () => {
    const d = dir()
    const file = join(d, '.broker.pid')
    const pid = await claimPidFile(file, join(d, '.broker.3000.pid'), () => {}, 4242)
    writeFileSync(file, '4343\n')
    await pid.release()
    expect(readFileSync(file, 'utf8')).toBe('4343\n')
  })

  it('refuses a symlink planted as the pid file and leaves its target alone', async () => {
    const d = dir()
    const file = join(d, '.broker.pid')
    const target = join(d, 'precious')
    writeFileSync(target, 'keep me\n')
    symlinkSync(target, file)
    await expect(claimPidFile(file, join(d, '.broker.3000.pid'), () => {}, 4242)).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
      exit: 2,
      message: expect.stringContaining('symbolic link'),
    })
    expect(readFileSync(target, 'utf8')).toBe('keep me\n')
    expect(lstatSync(file).isSymbolicLink()).toBe(true)
  })

  it('refuses a dangling symlink (it would create the target)', async () => {
    const d = dir()
    const file = join(d, '.broker.pid')
    symlinkSync(join(d, 'created-through-link'), file)
    await expect(claimPidFile(file, join(d, '.broker.3000.pid'), () => {}, 4242)).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
    })
    expect(existsSync(join(d, 'created-through-link'))).toBe(false)
  })

  it('refuses a hard link to another file', async () => {
    const d = dir()
    const file = join(d, '.broker.pid')
    const target = join(d, 'precious')
    writeFileSync(target, `${deadPid()}\n`)
    linkSync(target, file)
    const before = readFileSync(target, 'utf8')
    await expect(claimPidFile(file, join(d, '.broker.3000.pid'), () => {}, 4242)).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
    })
    expect(readFileSync(target, 'utf8')).toBe(before)
  })
})
