/**
 * One Lua VM for the Lua plugins of one fixture: booted with the compatibility prelude, the ngx
 * and kong globals and the module search path, kept for every replay of the fixture (Kong keeps
 * its VM for every request too); per request only the ctx tables start over.
 */
import { readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import type { Context } from '../kit/context.js'
import { FixtureError } from '../fixture/index.js'
import type { KitTree } from '../kit/index.js'
import type { Clock } from '../kit/private/clock.js'
import type { Phase } from '../kit/private/phases.js'
import type { Recorder } from '../kit/private/trace.js'
import { values } from '../kit/private/values.js'
import { KitBridge } from './bridge.js'
import { closeFiles } from './host/fs-write.js'
import { createHost } from './host/index.js'
import type { HostState } from './host/types.js'
import { onUseHint } from './manifest/index.js'
import { LIB_DIR, ModuleFinder, notEmulated, SYSTEM_DIRS } from './modules.js'
import { createVm } from './engine.js'
import { luajitWording } from './luajit-messages.js'
import type { LuaVm } from './vm.js'

export interface RuntimeOptions {
  /** Folders whose `kong/plugins/…` and other modules `require` finds, in order. */
  roots: string[]
  /** `LUA_PATH`-style templates searched after the roots. */
  templates: string[]
  /**
   * Modules named to a file (a rockspec's build.modules), searched before the roots; read at each lookup, so the
   * caller may fill it once the VM exists (a rockspec is read in it), before the first require.
   */
  named?: ReadonlyMap<string, { file: string; shown: string }>
  /** The rocks the plugin depends on (its rockspec's), named when a module is in no root. */
  dependencies?: string[]
  /** kong.configuration (Kong's defaults with the fixture's settings over them). */
  configuration: Record<string, unknown>
  /** The fixture's `db` section. */
  db: Record<string, unknown[]>
  /**
   * The kit plugins' files load with (Kong loads them in its init phase, before any request):
   * `kong.*` names resolve against it, and calls made at load time (`kong.node.get_hostname()`
   * at a module's top level) run on it, its context in init_worker, the earliest phase modelled.
   */
  probe: { kit: KitTree; ctx: Context }
  /** Bytes the Lua heap may hold. */
  heapLimit: number
  /** The fixture file (errors name it). */
  file: string
  /** The service's body in chunks for body_filter (`upstream.chunks`). */
  chunks?: string[]
  /**
   * A proxied service's body reaches body_filter as nginx's proxy hands it on: its data, then an empty last chunk
   * (ngx.arg[1] "", ngx.arg[2] true); `broker pdk test`'s Kong in process. Otherwise (a fixture's replay) the service
   * answers in the `chunks` given, or the whole body at once.
   */
  lastChunkApart?: boolean
  /** The time outside a request (a request reads its context's clock); the wall clock by default. */
  clock?: Clock
  /** What ngx.shared.<name> holds at the start (the fixture's `ngx_shared`). */
  shared?: Record<string, Record<string, unknown>>
  /** Lua may write the host's files (`broker pdk test`'s specs, as busted under Kong); a replay writes none. */
  writesFiles?: boolean
  /** Where relative paths start: the fixture's folder by default; a spec's run root, as busted's current folder. */
  baseDir?: string
}

/** The plugin a phase runs: its slot in the runtime and its name. */
export interface RunTarget {
  index: number
  name: string
}

// body_filter sees the body as the chunks the previous filter left (nginx passes each on)
const chunksOf = new WeakMap<Context, { body: Buffer | undefined; chunks: unknown[] }>()

/** A module a plugin required that broker does not emulate. */
/** What `missing` holds for a module found nowhere (as opposed to an unemulated module's hint). */
const NOT_FOUND = 'no file found'

export class ModuleMissing extends Error {
  constructor(
    readonly module: string,
    readonly hint: string,
    through = '',
  ) {
    super(`requires "${module}"${through}, which broker does not emulate (${hint})`)
  }
}

const KONG_VERSION = '3.9.1'
const KONG_VERSION_NUM = 3009001

export class LuaRuntime {
  private token = 0
  private ctx: Context | undefined
  /** Unemulated modules required so far (a failed phase that names one fails the fixture). */
  readonly missing = new Map<string, string>()
  /** The chain of modules that required each missing one (`kong.plugins.x.handler → kong.plugins.x.pattern → lpeg`). */
  readonly chains = new Map<string, string>()
  /** The chain of modules being loaded when each file was found, by the file as errors name it (a file that does not parse). */
  readonly loadedBy = new Map<string, string>()
  /** Whether Kong's worker start (init_worker, configure) has run in this VM; the errors it logged. */
  worker: { started: boolean; errors: string[] } = { started: false, errors: [] }
  /** The first use of a module that loads but is not emulated (resty.redis): it fails the fixture. */
  private used: { module: string; what: string } | undefined
  private closed = false
  /** Where `require` finds modules (set once, by `create`). */
  private finder: ModuleFinder | undefined

  private constructor(
    readonly vm: LuaVm,
    readonly bridge: KitBridge,
    readonly host: HostState,
    private readonly options: RuntimeOptions,
  ) {}

  /**
   * A runtime with no Lua root but broker's own modules, an empty database and Kong's defaults left out: the
   * Lua a plugin sees of ngx, the kit and broker's libraries, for probing them one call at a time.
   */
  static bare(
    probe: RuntimeOptions['probe'],
    file = 'test.json',
    more: Pick<RuntimeOptions, 'writesFiles'> = {},
  ): Promise<LuaRuntime> {
    return LuaRuntime.create({
      ...more,
      roots: [],
      templates: [],
      configuration: {},
      db: {},
      probe,
      heapLimit: 32 * 1024 * 1024,
      file,
    })
  }

  static async create(options: RuntimeOptions): Promise<LuaRuntime> {
    const vm = await createVm({ heapLimit: options.heapLimit })
    const bridge = new KitBridge(options.probe.kit)
    const host = createHost(
      bridge,
      options.baseDir ?? dirname(resolve(options.file)),
      options.clock,
      options.writesFiles,
    )
    const rt = new LuaRuntime(vm, bridge, host, options)
    const finder = new ModuleFinder(options.roots, options.templates, options.named)
    rt.finder = finder
    vm.register('__kit', bridge.call)
    vm.register('__kit_id', bridge.id)
    vm.register('__kit_as', bridge.callAs)
    vm.register('__host', host.call)
    vm.register('__find', (name: unknown, chain: unknown) => {
      const n = String(name)
      const found = finder.find(n)
      if (!Array.isArray(found)) {
        if (typeof chain === 'string') rt.loadedBy.set(found.shown, chain)
        return [found.source, found.file.startsWith(LIB_DIR) ? `broker:${found.shown}` : found.shown]
      }
      if (typeof chain === 'string' && chain.includes(' → ')) rt.chains.set(n, chain)
      const hint = notEmulated(n)
      if (hint) {
        rt.missing.set(n, hint)
        return [undefined, `\n\tbroker does not emulate '${n}' (${hint})`]
      }
      rt.missing.set(n, NOT_FOUND)
      const deps = options.dependencies ?? []
      // Kong's own rockspec (a checkout as the root) lists dozens: the first few say enough
      const named = deps.length > 8 ? `${deps.slice(0, 8).join(', ')} and ${deps.length - 8} more` : deps.join(', ')
      const rocks = deps.length
        ? `\n\tthe rockspec depends on ${named}: \`luarocks --lua-version 5.1 install <rock>\` puts a rock where broker searches (/usr/local/share/lua/5.1), or --lua-path names its folder`
        : ''
      return [undefined, found.map((f) => `\n\tno file '${f}'`).join('') + rocks]
    })
    vm.register('__unsupported', (module: unknown, what: unknown) => {
      const m = String(module)
      rt.used ??= { module: m, what: String(what) }
      return [`${String(what)}() is not emulated by broker: ${onUseHint(m)}`]
    })
    vm.run(readFileSync(join(LIB_DIR, 'broker', 'prelude.lua')), '@broker/prelude.lua')
    vm.run(readFileSync(join(LIB_DIR, 'broker', 'boot.lua')), '@broker/boot.lua')
    vm.call('__broker_boot', {
      configuration: options.configuration,
      version: KONG_VERSION,
      version_num: KONG_VERSION_NUM,
      db: options.db,
      ngx_shared: options.shared,
    })
    return rt
  }

  /** Loads a plugin's handler (and config) under slot `index`; its PRIORITY, VERSION and phases. */
  load(
    index: number,
    name: string,
    conf: Record<string, unknown>,
  ): { priority: number; version?: string; phases: string[] } {
    const [priority, version, phases] = this.loading(
      () => this.vm.call('__broker_load', index, name, conf) as [number, string, string[]],
    )
    return { priority: priority ?? 0, version, phases: phases ?? [] }
  }

  /** A plugin's schema.lua: its config with the defaults filled, and the fields it refuses. */
  schema(name: string, conf: unknown): [Record<string, unknown>, Record<string, string> | undefined] {
    return this.loading(
      () =>
        this.vm.call('__broker_schema', name, conf) as [Record<string, unknown>, Record<string, string> | undefined],
    )
  }

  /** The field names of a record of a plugin's config (`''` the config, `stamp` a record in it), for a did-you-mean. */
  fieldNames(name: string, path: string): string[] {
    const [names] = this.loading(() => this.vm.call('__broker_schema_fields', name, path))
    return Array.isArray(names) ? names.map(String) : []
  }

  /** Runs `fn` outside any request with the probe kit in the bridge (spec.helpers: a spec's own code between requests). */
  outsideRequest<T>(fn: () => T): T {
    return this.loading(fn)
  }

  /** Runs `load` with the probe kit in the bridge, so a module's top-level kit calls answer. */
  private loading<T>(load: () => T): T {
    const { kit, ctx } = this.options.probe
    ctx.phase = 'init_worker'
    this.bridge.use(kit, ctx, undefined)
    try {
      return load()
    } finally {
      this.bridge.leave()
    }
  }

  /**
   * Runs one plugin's phase (or, in init_worker, its `configure` handler); resolves with the error
   * (traceback included) when the plugin failed.
   */
  async run(
    plugin: RunTarget,
    phase: Phase,
    ctx: Context,
    kit: KitTree,
    record: Recorder | undefined,
    timeoutMs: number,
    handler?: 'configure',
  ): Promise<string | undefined> {
    this.bridge.use(kit, ctx, record)
    this.enter(ctx)
    if (phase === 'body_filter') return this.bodyFilter(plugin, ctx, timeoutMs)
    return this.phase(plugin, handler ?? phase, timeoutMs)
  }

  /** body_filter once per chunk, ngx.arg holding it; what the plugin leaves in ngx.arg[1] is passed on. */
  private async bodyFilter(plugin: RunTarget, ctx: Context, timeoutMs: number): Promise<string | undefined> {
    let state = chunksOf.get(ctx)
    if (!state || state.body !== ctx.response.body) {
      const body = ctx.response.body ?? Buffer.alloc(0)
      const given = this.options.chunks
      const chunks =
        given && given.join('') === body.toString('utf8')
          ? given
          : this.options.lastChunkApart && ctx.response.proxied && body.length > 0
            ? [body, '']
            : [body]
      state = { body: ctx.response.body, chunks }
    }
    const out: unknown[] = []
    for (let i = 0; i < state.chunks.length; i++) {
      this.vm.call('__broker_set_arg', state.chunks[i], i === state.chunks.length - 1)
      const failed = await this.phase(plugin, 'body_filter', timeoutMs)
      if (failed !== undefined) return failed
      const [chunk] = this.vm.call('__broker_get_arg')
      if (chunk !== undefined) out.push(chunk)
    }
    // kong.response.set_raw_body (the kit) wins over the chunks
    if (ctx.response.body === state.body) {
      ctx.response.body = Buffer.concat(out.map((c) => (Buffer.isBuffer(c) ? c : Buffer.from(String(c)))))
    }
    chunksOf.set(ctx, { body: ctx.response.body, chunks: ctx.response.body === state.body ? out : [ctx.response.body] })
    return undefined
  }

  /** Has `require` look again for `name` and the modules under it (the `named` modules changed: use_old_plugin). */
  forgetFound(name: string): void {
    this.finder?.forget(name)
  }

  /** Forgets the calls of unemulated modules made so far: a spec's own code made them, not the next request's plugins. */
  forgetUnsupportedCalls(): void {
    this.used = undefined
  }

  /**
   * The fixture error for a call of a module that loads but is not emulated (resty.redis), made
   * since the runtime started, or for a Lua error that is a failed `require`: a module broker does
   * not emulate (what to do instead), or one found in none of the Lua roots (where it was looked
   * for); undefined for any other error.
   */
  missingModule(text: string, path: string): FixtureError | undefined {
    if (this.used) {
      const { module, what } = this.used
      return new FixtureError(
        this.options.file,
        path,
        `calls ${what}() of "${module}", which broker does not emulate (${onUseHint(module)})`,
        // nginx's own API (ngx.socket) is no module a stub on lua_path could replace
        module.startsWith('ngx.') ? 'ngx-api' : 'module',
      )
    }
    for (const [module, hint] of this.missing) {
      if (!text.includes(`module '${module}' not found`)) continue
      const chain = this.chains.get(module)
      const through = chain ? ` (${chain})` : ''
      if (hint !== NOT_FOUND)
        return new FixtureError(this.options.file, path, new ModuleMissing(module, hint, through).message, 'module')
      const roots = [...this.options.roots, ...SYSTEM_DIRS]
      return new FixtureError(
        this.options.file,
        path,
        `requires "${module}"${through}, which is in none of the Lua roots searched (${roots.join(', ')}${
          this.options.templates.length ? `, LUA_PATH ${this.options.templates.join(';')}` : ''
        })`,
        'lua-path',
      )
    }
    return undefined
  }

  private async phase(plugin: RunTarget, phase: Phase | 'configure', timeoutMs: number): Promise<string | undefined> {
    const message = `[${plugin.name}] ${phase} phase did not finish within ${timeoutMs} ms (--timeout): stopped`
    const state = await this.drive(plugin.index, timeoutMs, message, (token) =>
      this.vm.call('__broker_start', token, plugin.index, phase),
    )
    // a use of resty.redis, or a resty.http call no `outbound` entry answers, fails the fixture even
    // when the plugin caught the error (pcall)
    if (this.host.unmatched) throw new FixtureError(this.options.file, '$.outbound', this.host.unmatched, 'outbound')
    if (state[0] !== 'error' && !this.used) return undefined
    // reported as Kong (LuaJIT) words it: the error.log line specs match
    const text = luajitWording(String(state[1]))
    const missing = this.missingModule(text, `$.plugins[${plugin.index}].module`)
    if (missing) throw missing
    return text
  }

  /** Runs a coroutine the first call started until it is done, awaiting the kit's promises on the way. */
  private async drive(
    index: number,
    timeoutMs: number,
    message: string,
    first: (token: number) => unknown[],
  ): Promise<unknown[]> {
    const token = ++this.token
    const deadline = performance.now() + timeoutMs
    let state: unknown[]
    this.vm.setDeadline(deadline, message)
    try {
      state = first(token)
      while (state[0] === 'await') {
        this.vm.setDeadline(undefined)
        const answer = await this.bridge.settle()
        this.vm.setDeadline(deadline, message)
        state = this.vm.call('__broker_resume', token, index, ...answer)
      }
    } finally {
      this.vm.setDeadline(undefined)
    }
    return state
  }

  /**
   * Calls the Lua global `fn(token, ...args)`, which runs a handler as broker/request.lua's `run` does (a
   * plugin's own Admin API route), on `ctx`'s kit: its state, "done", "exit" or "error" and a traceback.
   */
  async runHandler(ctx: Context, kit: KitTree, fn: string, args: unknown[], timeoutMs: number): Promise<unknown[]> {
    this.bridge.use(kit, ctx, undefined)
    this.enter(ctx)
    const message = `${fn} did not finish within ${timeoutMs} ms (--timeout): stopped`
    return this.drive(0, timeoutMs, message, (token) => this.vm.call(fn, token, ...args))
  }

  /**
   * Calls `kong.<path>(...args)` from Lua, as a plugin line would: its values (a Values when
   * several), or an Error with Lua's message. Call scripts run through it to check the Lua face.
   */
  async callKit(
    ctx: Context,
    kit: KitTree,
    record: Recorder | undefined,
    path: string,
    args: unknown[],
    timeoutMs = 10_000,
  ): Promise<unknown> {
    this.bridge.use(kit, ctx, record)
    this.enter(ctx)
    const state = await this.drive(0, timeoutMs, `kong.${path} did not return`, (token) =>
      this.vm.call('__broker_call', token, path, ...args),
    )
    if (state[0] === 'error') throw new Error(String(state[1]).replace(/\nstack traceback:[\s\S]*$/, ''))
    if (state[0] !== 'done') return undefined
    const list = state.slice(1)
    return list.length <= 1 ? list[0] : values(...list)
  }

  /** A new request's ctx tables (ngx.ctx, kong.ctx.*), when `ctx` is not the request running. */
  private enter(ctx: Context): void {
    if (ctx === this.ctx) return
    this.ctx = ctx
    this.host.begin(ctx)
    const { unnamed, named, whole } = ctx.data.captures
    // ngx.ctx.router_matches.uri_captures, made in Lua (broker/ngx_ctx.lua) where its keys can be numbers
    this.vm.call('__broker_begin', unnamed.length || Object.keys(named).length ? { unnamed, named, whole } : undefined)
  }

  /** Frees the VM; every plugin of the runtime calls it, the first one closes. */
  close(): void {
    if (this.closed) return
    this.closed = true
    this.vm.close()
    closeFiles(this.host)
  }
}
