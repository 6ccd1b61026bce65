/** pdk.cluster: the cluster ID the fixture configures. */
import type { Context } from './context.js'

/** Builds pdk.cluster; get_id is nil when no cluster ID is configured (DB-less without one). */
export function createCluster(ctx: Context) {
  return {
    get_id(): string | undefined {
      return ctx.data.clusterId
    },
  }
}
