/** pdk.router: the matched route and its service. */
import type { Context, Table } from './context.js'
import { checkPhase, SETS } from './phases.js'

/** Builds pdk.router for a request context. */
export function createRouter(ctx: Context) {
  return {
    get_route(): Table | undefined {
      checkPhase(ctx, SETS.C)
      return ctx.data.route
    },
    get_service(): Table | undefined {
      checkPhase(ctx, SETS.C)
      return ctx.data.service
    },
  }
}
