import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Redis } from 'ioredis'
import { freePort, waitFor } from './ports.js'

export interface RedisServer {
  port: number
  /** The server's process id (it changes on restart). */
  readonly pid: number
  /** Stops the server (SIGTERM) and removes its folder. */
  stop(): Promise<void>
  /** Stops it without removing data, to be started again on the same port with `restart`. */
  pause(): Promise<void>
  restart(): Promise<void>
}

/** Starts Debian's redis-server on a free loopback port, without persistence. */
export async function startRedis(extraArgs: string[] = []): Promise<RedisServer> {
  const port = await freePort()
  const dir = mkdtempSync(join(tmpdir(), 'broker-redis-'))
  let proc: ChildProcess
  // A server started with --requirepass is asked with that password whether it is up.
  const at = extraArgs.indexOf('--requirepass')
  const password = at >= 0 ? extraArgs[at + 1] : undefined
  const launch = async () => {
    proc = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, ...extraArgs],
      { stdio: 'ignore' },
    )
    await waitFor(
      async () => {
        const c = new Redis({
          port,
          host: '127.0.0.1',
          password,
          lazyConnect: true,
          maxRetriesPerRequest: 0,
          retryStrategy: () => null,
        })
        c.on('error', () => {})
        try {
          await c.connect()
          return (await c.ping()) === 'PONG'
        } finally {
          c.disconnect()
        }
      },
      10_000,
      `redis-server on ${port}`,
    )
  }
  const kill = () =>
    new Promise<void>((resolve) => {
      if (!proc || proc.exitCode !== null) return resolve()
      proc.once('exit', () => resolve())
      proc.kill('SIGTERM')
    })
  await launch()
  return {
    port,
    get pid() {
      return proc.pid!
    },
    stop: async () => {
      await kill()
      rmSync(dir, { recursive: true, force: true })
    },
    pause: kill,
    restart: launch,
  }
}
