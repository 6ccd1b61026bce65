/** pdk.node: node ID, hostname and memory statistics. */
import type { Context } from './context.js'
import { luaString } from './private/values.js'

const UNITS: Record<string, [number, string]> = { k: [2 ** 10, 'KiB'], m: [2 ** 20, 'MiB'], g: [2 ** 30, 'GiB'] }

/** Kong's bytes_to_str: a number of bytes for `b`, else "<n> KiB|MiB|GiB" with `scale` decimals. */
export function bytesToStr(bytes: number, unit: string = 'b', scale: number = 2): number | string {
  const u = unit.toLowerCase()
  if (u === '' || u === 'b') return Math.floor(bytes)
  if (typeof scale !== 'number' || scale < 0) throw new Error('scale must be equal or greater than 0')
  const found = Object.hasOwn(UNITS, u) ? UNITS[u] : undefined
  if (!found) throw new Error(`invalid unit '${unit}' (expected 'k/K', 'm/M', or 'g/G')`)
  return `${printfFixed(bytes / found[0], scale)} ${found[1]}`
}

/**
 * C's `%.<scale>f`: like toFixed, except that an exact tie rounds to even (toFixed rounds it up),
 * so 2.5 KiB at scale 0 prints "2" as Kong's string.format does.
 */
function printfFixed(x: number, scale: number): string {
  const fixed = x.toFixed(scale)
  if (!Number.isFinite(x) || x < 0) return fixed
  const view = new DataView(new ArrayBuffer(8))
  view.setFloat64(0, x)
  const bits = view.getBigUint64(0)
  const biased = Number((bits >> 52n) & 0x7ffn)
  const mantissa = (bits & ((1n << 52n) - 1n)) | (biased === 0 ? 0n : 1n << 52n)
  const shift = BigInt(1075 - (biased === 0 ? 1 : biased)) // x = mantissa / 2^shift
  if (shift <= 0n) return fixed
  const num = mantissa * 10n ** BigInt(scale)
  const den = 1n << shift
  const q = num / den
  if ((num % den) * 2n !== den || q % 2n !== 0n) return fixed
  const digits = q.toString().padStart(scale + 1, '0')
  return scale === 0 ? digits : `${digits.slice(0, -scale)}.${digits.slice(-scale)}`
}

/** Builds pdk.node for a request context. */
export function createNode(ctx: Context) {
  return {
    get_id(): string {
      return ctx.data.node.id
    },
    get_hostname(): string {
      return ctx.data.node.hostname
    },
    get_memory_stats(unit?: string | null, scale?: number | null) {
      const u = unit ?? 'b'
      const s = scale ?? 2
      if (typeof u !== 'string') throw new Error(`invalid unit '${luaString(u)}' (expected 'k/K', 'm/M', or 'g/G')`)
      bytesToStr(0, u, s) // validates before any work, as Kong does
      const mem = ctx.data.node.memory
      const lua_shared_dicts: Record<string, { capacity: number | string; allocated_slabs: number | string }> = {}
      for (const [name, d] of Object.entries(mem.lua_shared_dicts)) {
        lua_shared_dicts[name] = {
          capacity: bytesToStr(d.capacity, u, s),
          allocated_slabs: bytesToStr(d.allocated_slabs, u, s),
        }
      }
      const workers_lua_vms = [...mem.workers_lua_vms]
        .sort((a, b) => a.pid - b.pid)
        .map((w) => ({ pid: w.pid, http_allocated_gc: bytesToStr(w.http_allocated_gc, u, s) }))
      return { lua_shared_dicts, workers_lua_vms }
    },
  }
}
