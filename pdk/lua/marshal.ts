/**
 * Moving values between JS and a Lua stack through Lua's C API in WebAssembly, bytes intact:
 * strings are read as (pointer, length) from the heap and pushed with lua_pushlstring.
 */
import { isUtf8 } from 'node:buffer'
import { LuaRef, SPARSE_ARRAY_MAX } from './vm.js'

/** The raw Emscripten exports used here (wasmoon's module). */
export interface Api {
  HEAPU8: Uint8Array
  HEAPU32: Uint32Array
  _malloc(n: number): number
  _free(p: number): void
  addFunction(fn: (...a: number[]) => number | void, sig: string): number
  removeFunction(p: number): void
  // the Lua C API functions called here, by their Emscripten names
  _luaL_loadbufferx(...a: Array<number | bigint>): number
  _luaL_ref(...a: Array<number | bigint>): number
  _lua_absindex(...a: Array<number | bigint>): number
  _lua_createtable(...a: Array<number | bigint>): number
  _lua_error(...a: Array<number | bigint>): number
  _lua_getglobal(...a: Array<number | bigint>): number
  _lua_getmetatable(...a: Array<number | bigint>): number
  _lua_gettop(...a: Array<number | bigint>): number
  _lua_isinteger(...a: Array<number | bigint>): number
  _lua_next(...a: Array<number | bigint>): number
  _lua_pcallk(...a: Array<number | bigint>): number
  _lua_pushboolean(...a: Array<number | bigint>): number
  _lua_pushcclosure(...a: Array<number | bigint>): number
  _lua_pushinteger(...a: Array<number | bigint>): number
  _lua_pushlightuserdata(...a: Array<number | bigint>): number
  _lua_pushlstring(...a: Array<number | bigint>): number
  _lua_pushnil(...a: Array<number | bigint>): number
  _lua_pushnumber(...a: Array<number | bigint>): number
  _lua_rawequal(...a: Array<number | bigint>): number
  _lua_rawgeti(...a: Array<number | bigint>): number
  _lua_rawset(...a: Array<number | bigint>): number
  _lua_rawseti(...a: Array<number | bigint>): number
  _lua_rotate(...a: Array<number | bigint>): number
  _lua_setglobal(...a: Array<number | bigint>): number
  _lua_sethook(...a: Array<number | bigint>): number
  _lua_setmetatable(...a: Array<number | bigint>): number
  _lua_settop(...a: Array<number | bigint>): number
  _lua_toboolean(...a: Array<number | bigint>): number
  _lua_tointegerx(...a: Array<number | bigint>): number
  _lua_tolstring(...a: Array<number | bigint>): number
  _lua_tonumberx(...a: Array<number | bigint>): number
  _lua_topointer(...a: Array<number | bigint>): number
  _lua_touserdata(...a: Array<number | bigint>): number
  _lua_type(...a: Array<number | bigint>): number
}

const T_NIL = 0
const T_BOOLEAN = 1
const T_LIGHTUSERDATA = 2
const T_NUMBER = 3
const T_STRING = 4
const T_TABLE = 5
const MAX_DEPTH = 100
const latin = new TextDecoder('latin1')
const encoder = new TextEncoder()

/** Whether a JS number is a Lua integer (a float that is whole stays an integer, as LuaJIT prints it). */
const isInt = (n: number) => Number.isInteger(n) && Math.abs(n) <= Number.MAX_SAFE_INTEGER && !Object.is(n, -0)

export class Marshal {
  private readonly slots: Array<{ ptr: number; size: number }> = []
  private readonly lenPtr: number
  // the global holding the metatable that marks a table as an array for cjson (boot.lua makes it)
  private readonly markName: number

  constructor(private readonly api: Api) {
    this.lenPtr = api._malloc(8)
    const name = Buffer.from('__broker_array_mt\0')
    this.markName = api._malloc(name.length)
    api.HEAPU8.set(name, this.markName)
  }

  private slot(i: number, size: number): number {
    const s = (this.slots[i] ??= { ptr: 0, size: 0 })
    if (s.size < size) {
      if (s.ptr) this.api._free(s.ptr)
      s.size = Math.max(size, 256, s.size * 2)
      s.ptr = this.api._malloc(s.size)
    }
    return s.ptr
  }

  /** `bytes` copied into scratch slot `i`; valid until the slot is used again. */
  bytes(bytes: Uint8Array, i = 0): number {
    const ptr = this.slot(i, bytes.length + 1)
    this.api.HEAPU8.set(bytes, ptr)
    return ptr
  }

  /** A NUL-terminated copy of `s` in scratch slot `i`. */
  cstring(s: string, i = 2): number {
    const b = Buffer.from(s + '\0')
    return this.bytes(b, i)
  }

  free(): void {
    for (const s of this.slots) if (s.ptr) this.api._free(s.ptr)
    this.api._free(this.lenPtr)
    this.api._free(this.markName)
  }

  /** The value at `idx` as JS holds it (see LuaVm for the shapes). */
  read(L: number, idx: number, depth = 0): unknown {
    const api = this.api
    switch (api._lua_type(L, idx)) {
      case T_NIL:
        return undefined
      case T_BOOLEAN:
        return api._lua_toboolean(L, idx) !== 0
      case T_NUMBER:
        return api._lua_isinteger(L, idx)
          ? Number(api._lua_tointegerx(L, idx, 0) as unknown as bigint)
          : api._lua_tonumberx(L, idx, 0)
      case T_STRING: {
        const p = api._lua_tolstring(L, idx, this.lenPtr)
        const len = this.api.HEAPU32[this.lenPtr >> 2]!
        const view = this.api.HEAPU8.subarray(p, p + len)
        if (isAscii(view)) return latin.decode(view)
        return isUtf8(view) ? Buffer.from(view).toString('utf8') : Buffer.from(view)
      }
      case T_LIGHTUSERDATA:
        // ngx.null / cjson.null is the NULL light userdata, as in OpenResty
        return api._lua_touserdata(L, idx) === 0 ? null : new LuaRef('userdata', api._lua_touserdata(L, idx))
      case T_TABLE:
        return this.readTable(L, api._lua_absindex(L, idx), depth)
      default: {
        const type = ['nil', 'boolean', 'userdata', 'number', 'string', 'table', 'function', 'userdata', 'thread']
        return new LuaRef(type[api._lua_type(L, idx)] ?? 'userdata', api._lua_topointer(L, idx))
      }
    }
  }

  private readTable(L: number, idx: number, depth: number): unknown {
    if (depth >= MAX_DEPTH) throw new Error('table nested too deeply (a table that contains itself?)')
    const api = this.api
    let marked = false
    if (api._lua_getmetatable(L, idx)) {
      api._lua_getglobal(L, this.markName)
      marked = api._lua_rawequal(L, -1, -2) !== 0
      api._lua_settop(L, -3)
    }
    const keys: unknown[] = []
    const vals: unknown[] = []
    let sequence = true
    api._lua_pushnil(L)
    while (api._lua_next(L, idx)) {
      const k = this.read(L, -2, depth + 1)
      keys.push(k)
      vals.push(this.read(L, -1, depth + 1))
      if (typeof k !== 'number' || !Number.isInteger(k) || k < 1) sequence = false
      api._lua_settop(L, -2)
    }
    if (marked) {
      // an array_mt table is an array whatever else it holds, as lua-cjson encodes one: its positions 1..n only
      // (Kong's get_uri_captures().unnamed keeps the whole match at 0 and encodes without it)
      const arr: unknown[] = []
      for (let i = 0; i < keys.length; i++) {
        const k = keys[i]
        if (typeof k === 'number' && Number.isInteger(k) && k >= 1) arr[k - 1] = vals[i]
      }
      return arr
    }
    if (keys.length > 0 && sequence && keys.every((k) => (k as number) <= keys.length)) {
      const arr = new Array<unknown>(keys.length)
      for (let i = 0; i < keys.length; i++) arr[(keys[i] as number) - 1] = vals[i]
      return arr
    }
    const out: Record<string, unknown> = {}
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i]
      out[Buffer.isBuffer(k) ? k.toString('latin1') : String(k)] = vals[i]
    }
    if (keys.length > 0 && sequence)
      Object.defineProperty(out, SPARSE_ARRAY_MAX, { value: (keys as number[]).reduce((a, b) => (a > b ? a : b)) })
    return out
  }

  /** Pushes a JS value (see LuaVm for the shapes). */
  push(L: number, v: unknown, depth = 0): void {
    const api = this.api
    if (v === undefined) return void api._lua_pushnil(L)
    if (v === null) return void api._lua_pushlightuserdata(L, 0)
    switch (typeof v) {
      case 'boolean':
        return void api._lua_pushboolean(L, v ? 1 : 0)
      case 'number':
        return void (isInt(v) ? api._lua_pushinteger(L, BigInt(v)) : api._lua_pushnumber(L, v))
      case 'bigint':
        return void api._lua_pushinteger(L, BigInt.asIntN(64, v))
      case 'string':
        return this.pushString(L, v)
      case 'object':
        break
      default:
        return this.pushString(L, String(v))
    }
    if (v instanceof Uint8Array) {
      const ptr = this.bytes(v, 1)
      return void api._lua_pushlstring(L, ptr, v.length)
    }
    if (v instanceof LuaRef) return this.pushString(L, v.toString())
    if (depth >= MAX_DEPTH) throw new Error('value nested too deeply for Lua')
    if (Array.isArray(v)) {
      api._lua_createtable(L, v.length, 0)
      for (let i = 0; i < v.length; i++) {
        this.push(L, v[i], depth + 1)
        api._lua_rawseti(L, -2, BigInt(i + 1))
      }
      if (v.length === 0) {
        if (api._lua_getglobal(L, this.markName) === T_TABLE) api._lua_setmetatable(L, -2)
        else api._lua_settop(L, -2)
      }
      return
    }
    const entries = v instanceof Map ? [...v.entries()] : Object.entries(v)
    api._lua_createtable(L, 0, entries.length)
    for (const [k, x] of entries) {
      if (x === undefined) continue
      this.push(L, k, depth + 1)
      this.push(L, x, depth + 1)
      api._lua_rawset(L, -3)
    }
  }

  private pushString(L: number, s: string): void {
    const api = this.api
    // encodeInto writes straight into the heap; a string that did not fit is written again bigger
    let ptr = this.slot(1, s.length * 3 + 1)
    let size = this.slots[1]!.size
    let r = encoder.encodeInto(s, this.api.HEAPU8.subarray(ptr, ptr + size))
    if (r.read! < s.length) {
      ptr = this.slot(1, Buffer.byteLength(s) + 1)
      size = this.slots[1]!.size
      r = encoder.encodeInto(s, this.api.HEAPU8.subarray(ptr, ptr + size))
    }
    api._lua_pushlstring(L, ptr, r.written!)
  }
}

function isAscii(b: Uint8Array): boolean {
  for (let i = 0; i < b.length; i++) if (b[i]! > 0x7f) return false
  return true
}
