/**
 * What a spec file reaches outside its VM, for real: sockets (ngx.socket.tcp, under resty.redis), the
 * Redis of helpers.redis_host/redis_port, and resty.shell's commands. One per spec file; `close()` ends
 * the sockets and stops the Redis it started.
 */
import { spawnSync } from 'node:child_process'
import { isAbsolute, join } from 'node:path'
import type { LuaVm } from './pdk.js'
import { LocalRedis } from './redis-server.js'
import { SyncSockets, type SocketAnswer } from './sockets.js'

export class Outside {
  private readonly sockets = new SyncSockets()
  private readonly redis: LocalRedis

  constructor(private readonly root: string) {
    this.redis = new LocalRedis(this.sockets, root)
  }

  /** The host functions broker.spec.sockets, spec.helpers and resty.shell call. */
  register(vm: LuaVm): void {
    vm.register('__spec_socket', (op, args) => [socketCall(this.sockets, this.root, String(op), args)])
    vm.register('__spec_redis', () => [this.redis.get()])
    vm.register('__spec_shell', (cmd, stdin, timeout, max) => [shell(this.root, cmd, stdin, timeout, max)])
  }

  close(): void {
    this.redis.stop()
    this.sockets.close()
  }
}

/** resty.shell's run: /bin/sh in the plugin root; what lua-resty-shell answers (ok, stdout, stderr, reason, status). */
function shell(root: string, cmd: unknown, stdin: unknown, timeout: unknown, max: unknown): Record<string, unknown> {
  const r = spawnSync('/bin/sh', ['-c', String(cmd)], {
    cwd: root,
    input: typeof stdin === 'string' || Buffer.isBuffer(stdin) ? stdin : undefined,
    timeout: Number(timeout) || undefined,
    maxBuffer: Number(max) || undefined,
    encoding: 'buffer',
  })
  const out = { stdout: r.stdout ?? Buffer.alloc(0), stderr: r.stderr ?? Buffer.alloc(0) }
  if (r.error) return { ok: false, ...out, reason: r.error.message.includes('ETIMEDOUT') ? 'timeout' : r.error.message }
  if (r.signal) return { ok: false, ...out, reason: 'signal', status: r.signal }
  return r.status === 0
    ? { ok: true, ...out, reason: 'exit', status: 0 }
    : { ok: false, ...out, reason: 'exit', status: r.status }
}

/** ngx.socket.tcp/udp's and the spec servers' call (broker.spec.sockets, .servers): bytes as Buffers for Lua, files from the plugin root. */
function socketCall(sockets: SyncSockets, root: string, op: string, given: unknown): SocketAnswer {
  const args = { ...(given as Record<string, unknown>) }
  for (const k of ['ca', 'cert', 'key'] as const) {
    const file = args[k]
    if (typeof file === 'string' && !isAbsolute(file)) args[k] = join(root, file)
  }
  const timeout = typeof args.timeout === 'number' && args.timeout > 0 ? args.timeout : 60_000
  const answer = sockets.call(op, args, timeout)
  for (const k of ['data', 'partial'] as const) {
    const v = answer[k]
    if (v instanceof Uint8Array) answer[k] = asBuffer(v)
  }
  // a udp_server's datagrams
  if (Array.isArray(answer.packets)) answer.packets = answer.packets.map((p: Uint8Array) => asBuffer(p))
  return answer
}

const asBuffer = (v: Uint8Array): Buffer => Buffer.from(v.buffer, v.byteOffset, v.byteLength)
