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
    const port = Number(this.sockets.call('free_port', {}, 2_000).port)
    const sslPort = Number(this.sockets.call('free_port', {}, 2_000).port)
    const certs = join(this.root, 'spec', 'fixtures', 'redis')
    const tls = existsSync(join(certs, 'server.crt')) && existsSync(join(certs, 'server.key'))
    const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no']
    if (tls)
      args.push(
        ...['--tls-port', String(sslPort), '--tls-cert-file', join(certs, 'server.crt')],
        ...['--tls-key-file', join(certs, 'server.key'), '--tls-auth-clients', 'no'],
      )
    this.child = spawn('redis-server', args, { stdio: 'ignore' })
    process.once('exit', this.kill)
    for (let i = 0; i < 250; i++) {
      const r = this.sockets.call('connect', { host: '127.0.0.1', port, timeout: 200 }, 200)
      if (r.id !== undefined) {
        this.sockets.call('close', { id: r.id }, 200)
        return { host: '127.0.0.1', port, ssl_port: sslPort }
      }
      pause(20)
    }
    this.stop()
    return none(`broker started redis-server on port ${port}, which did not answer within 5 s`)
  }
}
