/**
 * The LuaVm on wasmoon 1.16.0 (official Lua 5.4 in WebAssembly). Only its compiled module and the
 * raw C API are used: values are moved with lua_tolstring / lua_pushlstring
 * through the WASM heap, because wasmoon's own conversion goes through NUL-terminated UTF-8 and
 * corrupts binary strings (bodies, digests).
 */
import { createRequire } from 'node:module'
import { setFlagsFromString } from 'node:v8'
import type { LuaFactory as Factory } from 'wasmoon'
import { LuaError, type HostFunction, type LuaVm, type LuaVmOptions } from './vm.js'
import { Marshal, type Api } from './marshal.js'

const REGISTRY = -1001000
const MASK_COUNT = 8
// instructions between two looks at the clock: a tight loop is stopped within a tenth of a millisecond
const HOOK_EVERY = 10_000
// V8 recompiles a WASM function with its optimizing compiler once it has run about this much code
// (V8's default: 1.8 MB). Booting one VM (Lua compiling the prelude and our modules) crossed the
// default for 28 functions of the Lua interpreter, ≈ 330 ms of background compiling and ≈ 80 ms of
// a `broker pdk run`'s CPU for a replay that then ran for a millisecond; at 200 MB one function is
// recompiled, and a plugin whose Lua runs long is still optimized (replay speed measured unchanged).
const TIERING_BUDGET = 200_000_000

// one factory, one compiled WASM module per process; each VM is a Lua state of its own on it
let factory: Factory | undefined
// the instance's own exports: wasmoon's module wraps each C function in a closure that checks the
// runtime is ready on every call; the raw functions skip that on each of a kit call's C API calls
let raw: WebAssembly.Exports | undefined

async function loadFactory(): Promise<Factory> {
  // wasmoon is a 150 KB UMD file: `import` makes Node scan it for CommonJS export names, ≈ 70 ms
  // of CPU measured per process; require() loads it without the scan.
  const { LuaFactory } = createRequire(import.meta.url)('wasmoon') as typeof import('wasmoon')
  // read by V8 when a module is instantiated; process-wide, it also reaches Node's own small WASM
  // (fetch's HTTP parser), for which the optimizing compiler makes no difference either
  setFlagsFromString(`--wasm-tiering-budget=${TIERING_BUDGET}`)
  const instantiate = WebAssembly.instantiate
  // the exports are taken as the module is instantiated, the one moment they are visible
  WebAssembly.instantiate = (async (...args: Parameters<typeof instantiate>) => {
    const made = await (instantiate as (...a: unknown[]) => Promise<unknown>)(...args)
    const instance =
      made instanceof WebAssembly.Instance ? made : (made as WebAssembly.WebAssemblyInstantiatedSource).instance
    raw ??= instance.exports
    return made
  }) as typeof instantiate
  try {
    const f = new LuaFactory()
    await f.getLuaModule()
    return f
  } finally {
    WebAssembly.instantiate = instantiate
  }
}

/** wasmoon's module with each `_name` C function replaced by the instance's raw `name` export. */
function fastApi(module: Api): Api {
  const fast = Object.create(module) as Record<string, unknown>
  for (const [name, fn] of Object.entries(raw ?? {})) {
    if (typeof fn === 'function' && `_${name}` in module) fast[`_${name}`] = fn
  }
  return fast as unknown as Api
}

/**
 * A LuaVm on a new Lua state of wasmoon's module. The state is made here, not by wasmoon's
 * LuaEngine: the engine registers its JS type extensions (≈ 10 ms of a process's CPU for the first)
 * that values moved through the C API never use, and its allocator goes through the module's
 * checked wrappers on each of Lua's allocations; this one counts bytes against the heap limit and
 * calls the raw realloc and free.
 */
export async function createWasmoonVm(options: LuaVmOptions): Promise<LuaVm> {
  factory ??= await loadFactory()
  const module = (await factory.getLuaModule()).module as unknown as Api
  const api = fastApi(module)
  const exports = raw as unknown as RawAlloc
  const heap = { used: 0, max: options.heapLimit }
  // Lua's lua_Alloc: (ud, ptr, osize, nsize); osize is the old block's size only when ptr is set
  const alloc = api.addFunction((_ud: number, ptr: number, oldSize: number, newSize: number): number => {
    if (newSize === 0) {
      if (ptr) {
        heap.used -= oldSize
        exports.free(ptr)
      }
      return 0
    }
    const grown = ptr ? newSize - oldSize : newSize
    if (grown > 0 && heap.used + grown > heap.max) return 0
    const moved = exports.realloc(ptr, newSize)
    if (moved) heap.used += grown
    return moved
  }, 'iiiii')
  const L = exports.lua_newstate(alloc, 0)
  if (!L) {
    api.removeFunction(alloc)
    throw new LuaError('not enough memory for a Lua state')
  }
  exports.luaL_openlibs(L)
  return new WasmoonVm(L, api, heap, () => {
    exports.lua_close(L)
    api.removeFunction(alloc)
  })
}

interface RawAlloc {
  realloc(ptr: number, size: number): number
  free(ptr: number): void
  lua_newstate(alloc: number, ud: number): number
  luaL_openlibs(L: number): void
  lua_close(L: number): void
}

/** Loads a chunk onto the stack (or its error message); Lua's status code. */
function loadChunk(api: Api, m: Marshal, L: number, bytes: Uint8Array, name: string): number {
  const buf = m.bytes(bytes)
  return api._luaL_loadbufferx(L, buf, bytes.length, m.cstring(name, 1), 0)
}

class WasmoonVm implements LuaVm {
  private readonly L: number
  private readonly api: Api
  private readonly m: Marshal
  private readonly pointers: number[] = []
  private deadline = Infinity
  private deadlineMessage = ''
  private tracebackRef = 0
  private hook = 0
  private hooked = false
  // the global names the host calls are few: each is written into the heap once
  private readonly names = new Map<string, number>()

  constructor(
    L: number,
    api: Api,
    private readonly heap: { used: number },
    private readonly closeState: () => void,
  ) {
    this.L = L
    this.api = api
    this.m = new Marshal(this.api)
    const hook = this.api.addFunction((L: number) => {
      if (performance.now() <= this.deadline) return
      this.m.push(L, this.deadlineMessage)
      this.api._lua_error(L)
    }, 'vii')
    this.pointers.push(hook)
    this.hook = hook
    // a message handler for calls from JS: the error with Lua's traceback
    const handler = Buffer.from(
      'return function(e) if type(e) ~= "string" then e = tostring(type(e) == "table" and e.message or e) end return debug.traceback(e, 2) end',
    )
    loadChunk(this.api, this.m, this.L, handler, '=broker')
    this.api._lua_pcallk(this.L, 0, 1, 0, 0, 0)
    this.tracebackRef = this.api._luaL_ref(this.L, REGISTRY)
  }

  register(name: string, fn: HostFunction): void {
    const api = this.api
    const m = this.m
    const ptr = api.addFunction((L: number) => {
      const n = api._lua_gettop(L)
      const args = new Array<unknown>(n)
      for (let i = 0; i < n; i++) args[i] = m.read(L, i + 1)
      let results: unknown[]
      try {
        results = fn(...args)
      } catch (e) {
        m.push(L, e instanceof Error ? e.message : String(e))
        return api._lua_error(L)
      }
      api._lua_settop(L, 0)
      for (const r of results) m.push(L, r)
      return results.length
    }, 'ii')
    this.pointers.push(ptr)
    api._lua_pushcclosure(this.L, ptr, 0)
    api._lua_setglobal(this.L, m.cstring(name))
  }

  run(code: string | Uint8Array, name: string): unknown[] {
    const api = this.api
    const base = api._lua_gettop(this.L)
    const status = loadChunk(api, this.m, this.L, typeof code === 'string' ? Buffer.from(code) : code, name)
    if (status !== 0) {
      const message = String(this.m.read(this.L, -1))
      api._lua_settop(this.L, base)
      throw new LuaError(message)
    }
    return this.pcall(base, 0)
  }

  call(name: string, ...args: unknown[]): unknown[] {
    const api = this.api
    const base = api._lua_gettop(this.L)
    let ptr = this.names.get(name)
    if (ptr === undefined) {
      const bytes = Buffer.from(`${name}\0`)
      ptr = this.api._malloc(bytes.length)
      this.api.HEAPU8.set(bytes, ptr)
      this.names.set(name, ptr)
    }
    api._lua_getglobal(this.L, ptr)
    for (const a of args) this.m.push(this.L, a)
    return this.pcall(base, args.length)
  }

  /** Calls the function at base+1 with `nargs` arguments above it, through Lua's traceback handler. */
  private pcall(base: number, nargs: number): unknown[] {
    const api = this.api
    let handler = 0
    if (this.tracebackRef) {
      api._lua_rawgeti(this.L, REGISTRY, BigInt(this.tracebackRef))
      api._lua_rotate(this.L, base + 1, 1)
      handler = base + 1
    }
    const status = api._lua_pcallk(this.L, nargs, -1, handler, 0, 0)
    if (status !== 0) {
      const message = this.m.read(this.L, -1)
      api._lua_settop(this.L, base)
      throw new LuaError(typeof message === 'string' ? message : String(message))
    }
    const top = api._lua_gettop(this.L)
    const first = handler ? base + 2 : base + 1
    const out: unknown[] = []
    for (let i = first; i <= top; i++) out.push(this.m.read(this.L, i))
    api._lua_settop(this.L, base)
    return out
  }

  setDeadline(at: number | undefined, message = 'timeout'): void {
    this.deadline = at ?? Infinity
    this.deadlineMessage = message
    // The count hook is a WASM→JS call every HOOK_EVERY instructions: a profile of one Lua
    // fixture showed it costing more than the plugin itself, so it is on only while a deadline
    // is (coroutines started meanwhile keep it, and it returns at once when the deadline lifts).
    const want = at !== undefined
    if (want === this.hooked) return
    this.hooked = want
    this.api._lua_sethook(this.L, want ? this.hook : 0, want ? MASK_COUNT : 0, want ? HOOK_EVERY : 0)
  }

  heapUsed(): number {
    return this.heap.used
  }

  close(): void {
    this.closeState()
    for (const p of this.pointers) this.api.removeFunction(p)
    for (const p of this.names.values()) this.api._free(p)
    this.m.free()
  }
}
