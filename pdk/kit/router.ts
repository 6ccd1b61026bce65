/** pdk.router: the matched route and its service. */
import type { Context, Table } from './context.js'
import { checkPhase, KONG, phaseRule, SETS } from './private/phases.js'

const ROUTER_PHASES = phaseRule(KONG.auth_and_later, SETS.C)

/** Builds pdk.router for a request context. */
export function createRouter(ctx: Context) {
  return {
    get_route(): Table | undefined {
      checkPhase(ctx, ROUTER_PHASES)
      return ctx.data.route
    },
    get_service(): Table | undefined {
      checkPhase(ctx, ROUTER_PHASES)
      return ctx.data.service
    },
  }
}
