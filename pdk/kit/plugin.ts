/** pdk.plugin: the instance ID of the running plugin. */
import type { Context } from './context.js'
import { checkPhase, phaseRule, SETS } from './private/phases.js'

// Kong's plugin.get_id checks no phase; the reference lists P
const ID_PHASES = phaseRule('any', SETS.P)

/** Builds pdk.plugin for a request context. */
export function createPlugin(ctx: Context) {
  return {
    get_id(): string | undefined {
      checkPhase(ctx, ID_PHASES)
      return ctx.plugin?.id
    },
  }
}
