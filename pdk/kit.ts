/** The kit: every module bound to one request context, and a flat index of its operations. */
import type { Context } from './context.js'
import { createClient } from './client.js'
import { createClientTls } from './client-tls.js'
import { createCluster } from './cluster.js'
import { createShared } from './ctx-shared.js'
import { createIp } from './ip.js'
import { createJwe } from './jwe/index.js'
import { coreLog, createLog } from './log/index.js'
import { createNode } from './node.js'
import { createPlugin } from './plugin.js'
import { createRequest } from './request/index.js'
import { createResponse } from './response/index.js'
import { createRouter } from './router.js'
import { createService } from './service.js'
import { createServiceRequest } from './service-request.js'
import { createServiceResponse } from './service-response.js'
import { createTelemetry } from './telemetry.js'
import { createTable } from './table.js'
import { createVault } from './vault.js'
import { createWebserver } from './webserver.js'

/** Any kit operation; callers check arguments at run time, as a plugin passes whatever it likes. */
export type KitFunction = (...args: never[]) => unknown

/** Nested modules as plugins see them (snake_case names). */
export interface KitTree {
  [name: string]: KitFunction | KitTree
}

/** Builds every module of the kit for `ctx`. */
export function createKit(ctx: Context): KitTree {
  const shared = createShared(ctx)
  const webserver = createWebserver(ctx)
  return {
    client: { ...createClient(ctx), tls: createClientTls(ctx) },
    cluster: createCluster(ctx),
    ctx: { shared },
    shared,
    enterprise_edition: { jwe: createJwe() },
    ip: createIp(ctx),
    log: createLog(ctx) as unknown as KitTree,
    webserver,
    // kong-js-pdk plugins know the web server module by Kong's name
    nginx: webserver,
    node: createNode(ctx),
    plugin: createPlugin(ctx),
    request: createRequest(ctx),
    response: createResponse(ctx, coreLog(ctx)),
    router: createRouter(ctx),
    service: { ...createService(ctx), request: createServiceRequest(ctx), response: createServiceResponse(ctx) },
    telemetry: createTelemetry(ctx),
    vault: createVault(ctx),
    table: createTable(),
  } as KitTree
}

/** camelCase → snake_case, as kong-js-pdk converts method names. */
const toSnake = (name: string): string => name.replace(/[a-z0-9][A-Z]/g, (s) => `${s[0]}_${s[1]!.toLowerCase()}`)

/** Every operation by dotted snake_case path, e.g. `client.tls.set_client_verify`. */
export function flatten(tree: KitTree, prefix = '', out = new Map<string, KitFunction>()): Map<string, KitFunction> {
  for (const [name, v] of Object.entries(tree)) {
    const path = prefix ? `${prefix}.${name}` : name
    if (typeof v === 'function') out.set(path, v)
    else flatten(v, path, out)
  }
  return out
}

/** Resolves a call name as a script or plugin writes it (`kong.` prefix and camelCase allowed). */
export function resolveCall(index: Map<string, KitFunction>, call: string): [string, KitFunction] | undefined {
  const path = call
    .replace(/^kong\./, '')
    .split('.')
    .map(toSnake)
    .join('.')
  // `log` alone is the base log call, at notice severity
  const fn = index.get(path) ?? (path === 'log' ? index.get('log.notice') : undefined)
  return fn ? [path, fn] : undefined
}
