/**
 * The Redis Kong's specs name (helpers.redis_host, redis_port, redis_ssl_port): unless the
 * KONG_SPEC_TEST_REDIS_* variables point at one, the first read of those constants starts a
 * redis-server from PATH on free loopback ports (with a TLS port when the plugin root has Kong's
 * spec/fixtures/redis certificates), and the end of the spec file stops it.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import type { SyncSockets } from './sockets.js'

/** Where the specs' Redis is, or why there is none (`unavailable`, shown with a failed connection). */
export interface RedisAddress {
  host: string
  port: number
  ssl_port: number
  unavailable?: string
}

// a short wait on this thread between tries (the spec's VM waits for the Redis anyway)
const pause = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms)

export class LocalRedis {
  private child: ChildProcess | undefined
  private address: RedisAddress | undefined
  private readonly kill = () => this.child?.kill('SIGKILL')

  constructor(
    private readonly sockets: SyncSockets,
    private readonly root: string,
    /** A free loopback port (a test gives a taken one first). */
    private readonly freePort = () => Number(sockets.call('free_port', {}, 2_000).port),
  ) {}

  /** The address, starting the server on the first call. */
  get(): RedisAddress {
    return (this.address ??= this.start())
  }

  stop(): void {
    this.child?.kill()
    process.off('exit', this.kill)
    this.child = undefined
  }

  private start(): RedisAddress {
    const env = process.env
    if (env.KONG_SPEC_TEST_REDIS_HOST || env.KONG_SPEC_TEST_REDIS_PORT) {
      return {
        host: env.KONG_SPEC_TEST_REDIS_HOST ?? 'localhost',
        port: Number(env.KONG_SPEC_TEST_REDIS_PORT ?? 6379),
        ssl_port: Number(env.KONG_SPEC_TEST_REDIS_SSL_PORT ?? 6380),
      }
    }
    const none = (why: string): RedisAddress => ({ host: 'localhost', port: 6379, ssl_port: 6380, unavailable: why })
    const probe = spawnSync('redis-server', ['--version'], { encoding: 'utf8' })
    if (probe.error || probe.status !== 0)
      return none('broker started no Redis: redis-server is not on PATH; install it or set KONG_SPEC_TEST_REDIS_HOST')
    // a free port may be taken by another process before redis-server binds it (other test runs start Redis
    // too): the server then exits, and what answers on the port is someone else's, so ours is asked its pid
    for (let attempt = 0; attempt < 5; attempt++) {
      const port = this.freePort()
      const sslPort = this.freePort()
      const certs = join(this.root, 'spec', 'fixtures', 'redis')
      const tls = existsSync(join(certs, 'server.crt')) && existsSync(join(certs, 'server.key'))
      const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no']
      if (tls)
        args.push(
          ...['--tls-port', String(sslPort), '--tls-cert-file', join(certs, 'server.crt')],
          ...['--tls-key-file', join(certs, 'server.key'), '--tls-auth-clients', 'no'],
        )
      const child = spawn('redis-server', args, { stdio: 'ignore' })
      this.child = child
      process.once('exit', this.kill)
      for (let i = 0; i < 250; i++) {
        const pid = this.pidAt(port)
        if (pid === child.pid) return { host: '127.0.0.1', port, ssl_port: sslPort }
        if (pid !== undefined) break
        pause(20)
      }
      this.stop()
    }
    return none('broker started redis-server five times and none answered on its port within 5 s')
  }

  /** The process id of the Redis answering on `port`, or undefined when none answers. */
  private pidAt(port: number): number | undefined {
    const c = this.sockets.call('connect', { host: '127.0.0.1', port, timeout: 200 }, 200)
    if (c.id === undefined) return undefined
    try {
      this.sockets.call('send', { id: c.id, data: '*2\r\n$4\r\nINFO\r\n$6\r\nserver\r\n' }, 1_000)
      const head = this.sockets.call('receive', { id: c.id, pattern: '*l', timeout: 1_000 }, 1_000)
      const size = Number(
        Buffer.from(head.data as Uint8Array)
          .toString()
          .slice(1),
      )
      if (!(size > 0)) return -1
      const body = this.sockets.call('receive', { id: c.id, pattern: size + 2, timeout: 1_000 }, 1_000)
      const pid = /process_id:(\d+)/.exec(Buffer.from(body.data as Uint8Array).toString())
      return pid ? Number(pid[1]) : -1
    } finally {
      this.sockets.call('close', { id: c.id }, 200)
    }
  }
}
