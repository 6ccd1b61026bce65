/**
 * The one small interface a Lua VM sits behind, so the engine (wasmoon today, pinned; engine.ts loads it)
 * can be swapped without touching the Lua face of the kit. Values cross as JS values with Lua's shapes:
 * `undefined` is nil, `null` is `ngx.null`, a Lua string is a JS string when it is valid UTF-8 and a
 * Buffer otherwise (bytes survive both ways), a table is an array (keys 1..n) or an object.
 */

/** A JS function Lua may call: its results are Lua's multiple return values. */
export type HostFunction = (...args: unknown[]) => unknown[]

/** A Lua value JS cannot hold (a function, a coroutine, userdata): kept by reference. */
export class LuaRef {
  constructor(
    readonly type: string,
    readonly id: number,
  ) {}
  toString(): string {
    return `${this.type}: 0x${this.id.toString(16).padStart(8, '0')}`
  }
}

/** Marker for a JS array that must reach Lua as cjson's empty array (kept an array by cjson.encode). */
export const EMPTY_ARRAY_MARK = Symbol('empty array')

/**
 * On the object a table of positive integer keys with holes becomes (`{ [2] = "x" }`): its largest key, so
 * cjson.encode can make it the array lua-cjson makes while every other reader sees the keys as before.
 */
export const SPARSE_ARRAY_MAX = Symbol('sparse array max')

/** Raised when a call into Lua fails: the message Lua gave, traceback included when Lua made one. */
export class LuaError extends Error {
  override get name(): string {
    return 'LuaError'
  }
}

export interface LuaVmOptions {
  /** Bytes the VM's heap may grow to before an allocation fails. */
  heapLimit: number
}

export interface LuaVm {
  /** Makes `fn` callable from Lua as the global `name`. */
  register(name: string, fn: HostFunction): void
  /** Runs a chunk (`name` is its chunkname, `@file` for a file) and returns its results. */
  run(code: string | Uint8Array, name: string): unknown[]
  /** Calls the global function `name`; a Lua error becomes a LuaError. */
  call(name: string, ...args: unknown[]): unknown[]
  /** Lua code past `at` (performance.now() milliseconds) raises `message`; undefined lifts it. */
  setDeadline(at: number | undefined, message?: string): void
  /** Bytes the VM's heap holds now. */
  heapUsed(): number
  close(): void
}
