/**
 * One spec file in one Lua VM: the runtime `pdk run` boots for a plugin root, our busted, luassert
 * and spec.helpers preloaded, the file run as a coroutine. Its yields are a test starting (a new
 * deadline) or a request for the host (Kong in process, kong.ts); the results come back as data.
 */
import { existsSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { SpecEnv } from './env.js'
import { InProcessKong } from './kong.js'
import { Outside } from './outside.js'
import { SpecRecorder } from './record.js'
import { ownSpecHelpers, PRELOAD, specModules } from './modules.js'
import { OldPlugins } from './old-plugin.js'
import { type NamedModule, rockspecDependencies, rockspecModules } from './rockspec.js'
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

// the kit plugins load with: no request yet, Kong's default configuration, the spec's environment as the env vault
const probeOf = (env: SpecEnv): Fixture => ({
  name: 'spec',
  request: { url: 'http://localhost/' },
  plugins: [],
  // each_strategy's database: plugins whose schema differs without one (rate-limiting's cluster policy) see it;
  // Kong's test configuration sets a Postgres password, which kong.configuration shows as Kong's placeholder
  kong_configuration: { database: 'postgres', pg_password: '******' },
  vault: { env: env.vault },
})

/** Runs one spec file; a file that cannot load is one error result, as busted reports it. */
export async function runSpecFile(o: SpecFileOptions): Promise<SpecResult[]> {
  // the spec's clock stands still but for its sleeps (ngx.sleep, wait_until's tries): a ttl runs out at once
  const clock = new VirtualClock(Date.now())
  const env = new SpecEnv()
  const probe = probeOf(env)
  const ctx = buildContext(probe, { clock })
  const roots = [o.root, ...customPlugins(o.root), ...(o.luaPath ?? []).map((p) => resolve(p))]
  // the modules the root's rockspec installs: read in the runtime's VM (the rockspec is Lua) before a require
  const named = new Map<string, NamedModule>()
  const runtime = await LuaRuntime.create({
    clock,
    roots,
    templates: [...(o.templates ?? []), ...luaPathTemplates(process.env.LUA_PATH)],
    named,
    dependencies: rockspecDependencies(o.root),
    configuration: kongConfiguration(probe),
    db: {},
    probe: { kit: createKit(ctx), ctx },
    heapLimit: 256 * 1024 * 1024,
    file: o.file,
    // a spec writes files as busted under Kong lets it (os.tmpname, io.open "wb"), and so do its Kong's plugins
    writesFiles: true,
    // Kong in process proxies as nginx does: a service's body, then an empty last chunk, to body_filter
    lastChunkApart: true,
    // relative paths start where busted runs, the root (spec/fixtures/…), not at the spec file's folder
    baseDir: o.root,
  })
  const outside = new Outside(o.root)
  try {
    const vm = runtime.vm
    for (const [name, m] of rockspecModules(o.root, vm)) named.set(name, m)
    outside.register(vm)
    const modules = specModules()
    vm.register('__spec_modules', () => [[...modules].map(([name, m]) => [name, m.file])])
    vm.register('__spec_source', (name) => [modules.get(String(name))?.source])
    // what a timer logged (timers run in the spec's own turns, with the probe's kit): its lines in error.log
    vm.register('__spec_log_count', () => [ctx.logs.length])
    vm.register('__spec_log_lines', (from) => [
      ctx.logs.slice(Number(from)).map((l) => l.line.replace(' [gateway] ', ' [kong] ')),
    ])
    vm.register('__spec_getenv', (name) => {
      const v = env.get(String(name))
      return v === null ? [undefined, true] : [v]
    })
    vm.register('__spec_setenv', (name, value) => {
      if (value === undefined || value === null) env.remove(String(name))
      else env.set(String(name), String(value))
      return []
    })
    // helpers.use_old_plugin: an older Kong's copy of a plugin for the Kong started next, and back
    const old = new OldPlugins(
      named,
      (name) => runtime.forgetFound(name),
      // as Kong's constants read it: the spec's environment (helpers.setenv, unsetenv), else broker's
      (name) => {
        const set = env.get(name)
        return set === null ? undefined : (set ?? process.env[name])
      },
    )
    vm.register('__spec_old_plugin', (name) => old.use(String(name)))
    vm.register('__spec_new_plugin', (name) => {
      old.recover(String(name))
      return []
    })
    vm.register('__spec_print', (line) => {
      ;(o.print ?? ((l: string) => process.stderr.write(l + '\n')))(String(line))
      return []
    })
    vm.run(PRELOAD, '@broker:preload')
    // a repository's own plain-busted spec/helpers.lua is its to use; Kong's (or none) is ours
    if (ownSpecHelpers(o.root)) vm.run('package.preload["spec.helpers"] = nil', '@broker:own-helpers')
    vm.run('require "busted.runner"', '@broker:start')
    const recorder =
      o.record === undefined ? undefined : new SpecRecorder(resolve(o.record), o.shown, roots, o.recorded)
    const kong = new InProcessKong(runtime, o.root, o.timeoutMs, clock, recorder, env.vault)
    // a plugin's resty.http to the mock upstream or the collector: answered at once, from a timer or inside a phase
    vm.register('__spec_server_answer', (op, request) => {
      const kind = String(op)
      if (kind !== 'upstream' && kind !== 'zipkin')
        return [{ raise: `spec.helpers: ${kind} is not a server in process` }]
      return [kong.serverAnswer(kind, request as Parameters<InProcessKong['serverAnswer']>[1])]
    })
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
    outside.close()
  }
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
