/** pdk.plugin: the instance ID of the running plugin. */
import type { Context } from './context.js'
import { checkPhase, SETS } from './phases.js'

/** Builds pdk.plugin for a request context. */
export function createPlugin(ctx: Context) {
  return {
    get_id(): string | undefined {
      checkPhase(ctx, SETS.P)
      return ctx.plugin?.id
    },
  }
}
