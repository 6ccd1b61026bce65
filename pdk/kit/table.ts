/** pdk.table (Kong's kong.table): preallocated tables, clearing in place, merging. No phase checks, as in Kong. */

type LuaTable = Record<string, unknown> | unknown[]

/** Kong's kong.tools.table.table_merge: the keys of `b` over those of `a`, in a new table. */
function merge(a?: LuaTable | null, b?: LuaTable | null): LuaTable {
  // a list is a table whose keys are 1..n: merged position by position
  if ((a == null || Array.isArray(a)) && (b == null || Array.isArray(b))) {
    const out = [...(a ?? [])]
    ;(b ?? []).forEach((v, i) => (out[i] = v))
    return out
  }
  return { ...(a ?? {}), ...(b ?? {}) }
}

/** Builds pdk.table. */
export function createTable() {
  return {
    /** table.new(narr, nrec): an empty table (the sizes are a preallocation hint). */
    new(_narr?: number, _nrec?: number): LuaTable {
      return {}
    },
    /** table.clear(t): empties `t` in place. */
    clear(t: LuaTable): void {
      if (typeof t !== 'object' || t === null) throw new Error(`bad argument #1 to 'clear' (table expected)`)
      if (Array.isArray(t)) t.length = 0
      else for (const k of Object.keys(t)) delete t[k]
    },
    merge,
  }
}
