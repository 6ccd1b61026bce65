/** The kit: every module bound to one request context, and a flat index of its operations. */
import type { Context } from './context.js'
import { createClient } from './client/index.js'
import { createClientTls } from './client/tls.js'
import { createCluster } from './cluster.js'
import { createShared } from './ctx.js'
import { createIp } from './ip.js'
import { createJwe } from './jwe/index.js'
import { coreLog, createLog } from './log/index.js'
import { createNode } from './node.js'
import { createPlugin } from './plugin.js'
import { createRequest } from './request/index.js'
import { createResponse } from './response/index.js'
import { createRouter } from './router.js'
import { createService } from './service/index.js'
import { createServiceRequest } from './service/request.js'
import { createServiceResponse } from './service/response.js'
import { createTelemetry } from './telemetry.js'
import { createTable } from './table.js'
import { createVault } from './vault.js'
import { createWebserver } from './nginx.js'

/** Any kit operation; callers check arguments at run time, as a plugin passes whatever it likes. */
export type KitFunction = (...args: never[]) => unknown

/** Nested modules as plugins see them (snake_case names). */
export interface KitTree {
  [name: string]: KitFunction | KitTree
}

type Maker = (ctx: Context, kit: KitTree) => unknown

// each module is made on first use (a getter on the prototype, replaced by the value): a replay
// pays only for the modules its plugins touch
const MODULES: Record<string, Maker> = {
  client: (ctx) => ({ ...createClient(ctx), tls: createClientTls(ctx) }),
  cluster: (ctx) => createCluster(ctx),
  ctx: (_ctx, kit) => ({ shared: kit.shared }),
  shared: (ctx) => createShared(ctx),
  enterprise_edition: () => ({ jwe: createJwe() }),
  ip: (ctx) => createIp(ctx),
  log: (ctx) => createLog(ctx),
  webserver: (ctx) => createWebserver(ctx),
  // kong-js-pdk plugins know the web server module by Kong's name
  // kong-pdk's typings alias nginx.shared.get/set to ctx.shared.get/set (its generator's config says so)
  nginx: (_ctx, kit) => ({ ...(kit.webserver as KitTree), shared: kit.shared as KitTree }),
  node: (ctx) => createNode(ctx),
  plugin: (ctx) => createPlugin(ctx),
  request: (ctx) => createRequest(ctx),
  response: (ctx) => createResponse(ctx, coreLog(ctx)),
  router: (ctx) => createRouter(ctx),
  service: (ctx) => ({
    ...createService(ctx),
    request: createServiceRequest(ctx),
    response: createServiceResponse(ctx),
  }),
  telemetry: (ctx) => createTelemetry(ctx),
  vault: (ctx) => createVault(ctx, coreLog(ctx)),
  table: () => createTable(),
}

const CTX = Symbol('ctx')

class Kit {
  readonly [CTX]: Context
  constructor(ctx: Context) {
    this[CTX] = ctx
  }
}
for (const [name, make] of Object.entries(MODULES)) {
  Object.defineProperty(Kit.prototype, name, {
    enumerable: true,
    get(this: Kit) {
      const value = make(this[CTX], this as unknown as KitTree)
      Object.defineProperty(this, name, { value, enumerable: true })
      return value
    },
  })
}

/** The kit's module names (the top level of the tree). */
export const KIT_MODULES: ReadonlySet<string> = new Set(Object.keys(MODULES))

/** Builds the kit for `ctx`. */
export function createKit(ctx: Context): KitTree {
  return new Kit(ctx) as unknown as KitTree
}

/** camelCase → snake_case as kong-js-pdk's bridge converts method names: a lowercase letter then a capital becomes `x_y`. */
export const snakeCase = (name: string): string => name.replace(/[a-z][A-Z]/g, (s) => `${s[0]}_${s[1]}`.toLowerCase())

/** Every operation by dotted snake_case path, e.g. `client.tls.set_client_verify`. */
export function flatten(tree: KitTree, prefix = '', out = new Map<string, KitFunction>()): Map<string, KitFunction> {
  // for...in: the kit's modules are getters on its prototype until first used
  for (const name in tree) {
    const v = tree[name]!
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
    .map(snakeCase)
    .join('.')
  // `log` alone is the base log call, at notice severity
  const fn = index.get(path) ?? (path === 'log' ? index.get('log.notice') : undefined)
  return fn ? [path, fn] : undefined
}
