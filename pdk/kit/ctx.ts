/** pdk.ctx.shared and pdk.shared: per-request key-value data shared between plugins. */
import type { Context } from './context.js'

/** Builds the shared store API; both pdk.ctx.shared and pdk.shared use the same store. */
export function createShared(ctx: Context) {
  return {
    get(k: string): unknown {
      if (typeof k !== 'string') throw new Error('key must be a string')
      return ctx.shared.get(k)
    },
    set(k: string, v: unknown): void {
      if (typeof k !== 'string') throw new Error('key must be a string')
      if (v === undefined || v === null) ctx.shared.delete(k)
      else ctx.shared.set(k, v)
    },
  }
}
