/** pdk.node: node ID, hostname and memory statistics. */
import type { Context } from './context.js'

const UNITS: Record<string, [number, string]> = { k: [2 ** 10, 'KiB'], m: [2 ** 20, 'MiB'], g: [2 ** 30, 'GiB'] }

/** Kong's bytes_to_str: a number of bytes for `b`, else "<n> KiB|MiB|GiB" with `scale` decimals. */
export function bytesToStr(bytes: number, unit: string = 'b', scale: number = 2): number | string {
  const u = unit.toLowerCase()
  if (u === '' || u === 'b') return Math.floor(bytes)
  if (typeof scale !== 'number' || scale < 0) throw new Error('scale must be equal or greater than 0')
  const found = UNITS[u]
  if (!found) throw new Error(`invalid unit '${unit}' (expected 'k/K', 'm/M', or 'g/G')`)
  return `${(bytes / found[0]).toFixed(scale)} ${found[1]}`
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
      if (typeof u !== 'string') throw new Error(`invalid unit '${String(u)}' (expected 'k/K', 'm/M', or 'g/G')`)
      bytesToStr(0, u, s) // validates before any work, as Kong does
      const mem = ctx.data.node.memory
      const lua_shared_dicts: Record<string, { capacity: number | string; allocated_slabs: number | string }> = {}
      for (const [name, d] of Object.entries(mem.lua_shared_dicts)) {
        lua_shared_dicts[name] = { capacity: bytesToStr(d.capacity, u, s), allocated_slabs: bytesToStr(d.allocated_slabs, u, s) }
      }
      const workers_lua_vms = [...mem.workers_lua_vms]
        .sort((a, b) => a.pid - b.pid)
        .map((w) => ({ pid: w.pid, http_allocated_gc: bytesToStr(w.http_allocated_gc, u, s) }))
      return { lua_shared_dicts, workers_lua_vms }
    },
  }
}
