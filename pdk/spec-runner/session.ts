/**
 * One spec file in one Lua VM: the runtime `pdk run` boots for a plugin root, our busted, luassert
 * and spec.helpers preloaded, the file run as a coroutine. Its yields are a test starting (a new
 * deadline) or a request for the host (Kong in process, kong.ts); the results come back as data.
 */
import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { isAbsolute, join, resolve } from 'node:path'
import { InProcessKong } from './kong.js'
import { LocalRedis } from './redis-server.js'
import { SyncSockets, type SocketAnswer } from './sockets.js'
import { SpecRecorder } from './record.js'
import { PRELOAD, specModules } from './modules.js'
import {
  buildContext,
  createKit,
  kongConfiguration,
  LuaRuntime,
  luaPathTemplates,
  VirtualClock,
  type Fixture,
} from './pdk.js'

/** One test's (or a failed hook's) outcome, as the Lua runner reports it. */
export interface SpecResult {
  status: 'success' | 'failure' | 'error' | 'pending'
  /** The full name: the describe blocks' names and the test's, joined by spaces. */
  name: string
  /** Where the test (or block) is declared. */
  file: string
  line: number
  /** it, pending, or the hook or block that failed (before_each, lazy_setup, describe, file …). */
  descriptor: string
  message?: string
  trace?: { short_src: string; currentline: number; traceback?: string }
  /** Seconds. */
  duration: number
}

export interface SpecFileOptions {
  /** The plugin root: `kong/plugins/<name>/` and the spec's own modules resolve from it. */
  root: string
  /** The spec file, absolute. */
  file: string
  /** The file as results name it (relative to the root). */
  shown: string
  luaPath?: string[]
  /** `?`-templates `require` searches after the roots (a .busted task's lpath). */
  templates?: string[]
  tags?: string[]
  excludeTags?: string[]
  filter?: string[]
  filterOut?: string[]
  /** setup/teardown are the lazy ones (busted --lazy). */
  lazy?: boolean
  /** Milliseconds one test may run. */
  timeoutMs: number
  /** Where `print` in a spec writes. */
  print?: (line: string) => void
  /** broker pdk test --record: the folder each proxied request's fixture is written to. */
  record?: string
  /** The fixtures written (--record), added to as they are. */
  recorded?: string[]
}

// the kit plugins load with: no request yet, Kong's default configuration
const PROBE: Fixture = {
  name: 'spec',
  request: { url: 'http://localhost/' },
  plugins: [],
  // each_strategy's database: plugins whose schema differs without one (rate-limiting's cluster policy) see it;
  // Kong's test configuration sets a Postgres password, which kong.configuration shows as Kong's placeholder
  kong_configuration: { database: 'postgres', pg_password: '******' },
}

/** Runs one spec file; a file that cannot load is one error result, as busted reports it. */
export async function runSpecFile(o: SpecFileOptions): Promise<SpecResult[]> {
  // the spec's clock stands still but for its sleeps (ngx.sleep, wait_until's tries): a ttl runs out at once
  const clock = new VirtualClock(Date.now())
  const ctx = buildContext(PROBE, { clock })
  const roots = [o.root, ...customPlugins(o.root), ...(o.luaPath ?? []).map((p) => resolve(p))]
  const runtime = await LuaRuntime.create({
    clock,
    roots,
    templates: [...(o.templates ?? []), ...luaPathTemplates(process.env.LUA_PATH)],
    configuration: kongConfiguration(PROBE),
    db: {},
    probe: { kit: createKit(ctx), ctx },
    heapLimit: 256 * 1024 * 1024,
    file: o.file,
  })
  const sockets = new SyncSockets()
  const redis = new LocalRedis(sockets, o.root)
  try {
    const vm = runtime.vm
    vm.register('__spec_socket', (op, args) => [socketCall(sockets, o.root, String(op), args)])
    vm.register('__spec_redis', () => [redis.get()])
    vm.register('__spec_shell', (cmd, stdin, timeout, max) => [shell(o.root, cmd, stdin, timeout, max)])
    const modules = specModules()
    vm.register('__spec_modules', () => [[...modules].map(([name, m]) => [name, m.file])])
    vm.register('__spec_source', (name) => [modules.get(String(name))?.source])
    vm.register('__spec_print', (line) => {
      ;(o.print ?? ((l: string) => process.stderr.write(l + '\n')))(String(line))
      return []
    })
    vm.run(PRELOAD, '@broker:preload')
    vm.run('require "busted.runner"', '@broker:start')
    const recorder =
      o.record === undefined ? undefined : new SpecRecorder(resolve(o.record), o.shown, roots, o.recorded)
    const kong = new InProcessKong(runtime, o.root, o.timeoutMs, clock, recorder)
    const opts = {
      tags: o.tags,
      exclude_tags: o.excludeTags,
      filter: o.filter,
      filter_out: o.filterOut,
      lazy: o.lazy,
      record: recorder !== undefined || undefined,
    }
    const message = `a test did not finish within ${o.timeoutMs} ms (--timeout): stopped`
    vm.setDeadline(performance.now() + o.timeoutMs, message)
    // the spec's own code (a require of a plugin module, start_kong) calls the kit as module load does
    let state = runtime.outsideRequest(() =>
      vm.call('__spec_start', readFileSync(o.file, 'utf8'), o.shown, strip(opts)),
    )
    for (;;) {
      const [kind, ...rest] = state
      if (kind === 'done') return (rest[0] as SpecResult[] | undefined) ?? []
      if (kind === 'error') return [fileError(o, String(rest[0]))]
      let answer: unknown[] = []
      if (kind === 'host') answer = [await hostAnswer(kong, String(rest[0]), rest[1])]
      vm.setDeadline(performance.now() + o.timeoutMs, message)
      state = runtime.outsideRequest(() => vm.call('__spec_resume', ...answer))
    }
  } finally {
    runtime.vm.setDeadline(undefined)
    runtime.close()
    redis.stop()
    sockets.close()
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

/** ngx.socket.tcp's call (broker.spec.sockets): bytes as Buffers for Lua, a CA file from the plugin root. */
function socketCall(sockets: SyncSockets, root: string, op: string, given: unknown): SocketAnswer {
  const args = { ...(given as Record<string, unknown>) }
  if (typeof args.ca === 'string' && !isAbsolute(args.ca)) args.ca = join(root, args.ca)
  const timeout = typeof args.timeout === 'number' && args.timeout > 0 ? args.timeout : 60_000
  const answer = sockets.call(op, args, timeout)
  for (const k of ['data', 'partial'] as const) {
    const v = answer[k]
    if (v instanceof Uint8Array) answer[k] = Buffer.from(v.buffer, v.byteOffset, v.byteLength)
  }
  return answer
}

// Kong's test configuration puts its fixture plugins on the Lua path (lua_package_path): a plugin
// root that has them gets them too, so a spec naming one (`error-generator`, `ctx-checker`) loads it
const customPlugins = (root: string): string[] =>
  [join(root, 'spec', 'fixtures', 'custom_plugins')].filter((d) => existsSync(d))

/** Kong in process's answer; a failure of broker's own there fails the spec's line, not the whole run. */
async function hostAnswer(kong: InProcessKong, op: string, payload: unknown): Promise<unknown> {
  try {
    return await kong.handle(op, payload)
  } catch (e) {
    return { raise: `broker failed to answer this request (${op}): ${e instanceof Error ? e.message : String(e)}` }
  }
}

const fileError = (o: SpecFileOptions, message: string): SpecResult => ({
  status: 'error',
  name: o.shown,
  file: o.shown,
  line: 0,
  descriptor: 'file',
  message,
  duration: 0,
})

/** Without undefined fields (nothing crosses as nil inside a table). */
const strip = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined))
