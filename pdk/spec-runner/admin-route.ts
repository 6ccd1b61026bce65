/**
 * A plugin's own Admin API route (its api.lua), run as Kong's Admin API runs one: in the admin_api phase, on a
 * kit of its own for the Admin API's request, so kong.request reads it, kong.response.exit answers it and
 * ngx.print writes its body. broker/spec/admin_routes.lua matched the route and holds the handler; this runs it.
 */
import {
  buildContext,
  createKit,
  kongOrder,
  startWorkers,
  type Clock,
  type HeadersTable,
  type LuaRuntime,
  type PluginHandler,
} from './pdk.js'

/** The Admin API request admin_routes.lua hands the host. */
export interface AdminRouteRequest {
  method: string
  path: string
  query?: string
  headers?: Record<string, string | string[]>
  body?: string
  /** The database as it stands (the plugins whose worker must have started). */
  db?: { plugins?: unknown }
  generation?: number
}

export type AdminRouteAnswer =
  { status: number; headers: HeadersTable; body: string; log: string[] } | { raise: string }

/**
 * Runs the handler admin_routes.lua is holding (its global `__spec_admin_route`); the answer it gave. The
 * configured plugins' workers start first, as Kong's have before its Admin API answers (prometheus's /metrics
 * reads the counters its init_worker made).
 */
export async function runAdminRoute(
  runtime: LuaRuntime,
  clock: Clock,
  req: AdminRouteRequest,
  timeoutMs: number,
  plugins: readonly PluginHandler[],
): Promise<AdminRouteAnswer> {
  const query = req.query ? `?${req.query}` : ''
  const ctx = buildContext(
    {
      name: `${req.method} ${req.path}`,
      request: {
        method: req.method,
        url: `http://127.0.0.1:9001${req.path}${query}`,
        headers: req.headers ?? {},
        body: req.body,
      },
      plugins: [],
    },
    { clock },
  )
  const kit = createKit(ctx)
  await startWorkers(kongOrder(plugins), { ctx, kit, record: () => {}, timeoutMs, kept: new Map() }, () => {})
  ctx.phase = 'admin_api'
  const state = await runtime.runHandler(ctx, kit, '__spec_admin_route', [], timeoutMs)
  // the Lua side answers every outcome (errors included) with kong.response.exit; an error here is broker's
  if (state[0] === 'error') return { raise: `the Admin API route failed in broker: ${String(state[1])}` }
  const res = ctx.response
  return {
    status: res.status,
    headers: res.headers.table().headers,
    body: res.body?.toString('utf8') ?? '',
    log: ctx.logs.map((l) => l.line.replace(' [gateway] ', ' [kong] ')),
  }
}
