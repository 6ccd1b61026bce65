import { cpus } from 'node:os'
import { z } from 'zod'
import { classifyAddress, isIpLiteral } from './addresses.js'
import { DELIVERY_MODES, isLoopbackListen } from './runtime.js'

export { DELIVERY_MODES, type DeliveryMode } from './runtime.js'

/** A list that a config file may also give as one comma-separated string, as its environment variable does. */
const commaList = <T extends z.ZodTypeAny>(list: T) =>
  z.preprocess(
    (v) =>
      typeof v === 'string'
        ? v
            .split(',')
            .map((s) => s.trim())
            .filter(Boolean)
        : v,
    list,
  )

/** A Redis node: "host:port" (from a file or a comma list in the environment) or {host, port}. */
const redisNode = z.union([
  z
    .string()
    .regex(/^[^\s:]+:\d{1,5}$|^\[[0-9a-fA-F:]+\]:\d{1,5}$/, 'must be "host:port"')
    .transform((v) => {
      const at = v.lastIndexOf(':')
      return { host: v.slice(0, at).replace(/^\[|\]$/g, ''), port: Number(v.slice(at + 1)) }
    }),
  z.object({ host: z.string().min(1), port: z.number().int().min(1).max(65535) }).strict(),
])

/**
 * The one schema of the broker's configuration: it holds the defaults and validates once at the
 * boundary; CONFIG_DOCS in key-docs.ts gives each key its help text and flag. Objects are strict, so a
 * misspelt key is refused instead of silently ignored.
 */
export const configSchema = z
  .object({
    host: z.string().min(1).default('localhost:3000'),
    protocol: z.enum(['http', 'https']).default('http'),
    port: z.number().int().min(0).max(65535).default(3000),
    listen: z.string().min(1).default('127.0.0.1'),
    workers: z.number().int().min(1).max(256).default(cpus().length),
    pid: z
      .object({
        dir: z
          .string()
          .min(1)
          .default('./')
          .refine((v) => v.endsWith('/'), { message: 'must end with a slash, e.g. "./" or "/var/run/"' }),
      })
      .strict()
      .default({}),
    store: z
      .object({
        driver: z.enum(['auto', 'redis', 'memory']).default('auto'),
        host: z.string().min(1).default('127.0.0.1'),
        port: z.number().int().min(1).max(65535).default(6379),
        pass: z.string().optional(),
        expire: z.number().int().min(1).max(86_400).default(60),
        callbackWait: z.number().int().min(1).max(86_400).default(600),
        prefix: z.string().default('broker:'),
        keys: z.array(z.string().min(32, 'must be at least 32 characters')).min(1).optional(),
        timeout: z.number().int().min(50).max(60_000).default(1000),
        url: z
          .string()
          .regex(/^rediss?:\/\/[^\s]+$/, 'must be a redis:// or rediss:// URL')
          .optional(),
        tls: z
          .object({ ca: z.string().min(1).optional(), rejectUnauthorized: z.boolean().default(true) })
          .strict()
          .optional(),
        sentinels: z.array(redisNode).min(1).optional(),
        name: z.string().min(1).optional(),
        sentinelPass: z.string().optional(),
        cluster: z.array(redisNode).min(1).optional(),
        // Unset: 1 when the store is Sentinel-managed and its master has a replica, else 0 (connect.ts).
        replicas: z.number().int().min(0).max(16).optional(),
        // failover: short WAITs answered only just after a Sentinel switch (store/shortfall.ts).
        replicaShortfall: z.enum(['failover', 'refuse', 'accept']).default('failover'),
        memoryLimit: z.number().int().min(1).max(65_536).default(128),
      })
      .strict()
      .superRefine((store, ctx) => {
        const modes = [store.url && 'url', store.sentinels && 'sentinels', store.cluster && 'cluster'].filter(Boolean)
        if (modes.length > 1)
          ctx.addIssue({
            code: z.ZodIssueCode.custom,
            message: `use one of url, sentinels, cluster (got ${modes.join(' and ')})`,
          })
        if (store.sentinels && !store.name)
          ctx.addIssue({
            code: z.ZodIssueCode.custom,
            path: ['name'],
            message: 'is required with store.sentinels (the master name, e.g. "mymaster")',
          })
        if (store.cluster && store.replicas)
          ctx.addIssue({
            code: z.ZodIssueCode.custom,
            path: ['replicas'],
            message:
              "is not supported with store.cluster (WAIT answers for one node's replicas); use Redis Cluster's own min-replicas-to-write",
          })
        if ((store.url || store.sentinels || store.cluster) && store.driver === 'memory') {
          ctx.addIssue({
            code: z.ZodIssueCode.custom,
            path: ['driver'],
            message: 'memory cannot be combined with store.url, store.sentinels or store.cluster',
          })
        }
      })
      .default({}),
    session: z
      .object({ secret: z.string().min(16).optional() })
      .strict()
      .default({}),
    // Guardian's cookie.secret: it keys the browser-binding cookie; unset, a key derived from session.secret does.
    cookie: z
      .object({
        secret: z.string().min(16).optional(),
        previousSecrets: z.array(z.string().min(16)).min(1).optional(),
      })
      .strict()
      .default({}),
    callbacks: z
      .object({ allow: commaList(z.array(z.string().min(1))).optional() })
      .strict()
      .default({}),
    delivery: z
      .object({
        allow: z
          .array(z.enum(DELIVERY_MODES))
          .min(1)
          .default([...DELIVERY_MODES]),
      })
      .strict()
      .default({}),
    plugins: z
      .object({ dir: z.string().min(1).optional() })
      .strict()
      .default({}),
    provider: z
      .object({ timeout: z.number().int().min(100).max(300_000).default(10_000) })
      .strict()
      .default({}),
    registration: z
      .object({
        ttl: z.number().int().min(60).max(31_536_000).default(86_400),
        clientName: z.string().min(1).max(200).default('broker'),
        recheck: z.number().int().min(0).max(86_400).default(0),
        perHost: z.number().int().min(1).max(100_000).default(64),
        logoUri: z.string().url().max(2048).optional(),
        clientUri: z.string().url().max(2048).optional(),
      })
      .strict()
      .default({}),
    body: z
      .object({ limit: z.number().int().min(1024).max(10_485_760).default(65_536) })
      .strict()
      .default({}),
    log: z
      .object({ level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info') })
      .strict()
      .default({}),
    admin: z
      .object({ key: z.string().min(16).optional() })
      .strict()
      .default({}),
    api: z
      .object({ keys: z.array(z.string().min(16)).min(1).optional(), open: z.boolean().default(false) })
      .strict()
      .default({}),
    providers: z
      .object({
        allow: z
          .array(
            z
              .string()
              .regex(
                /^(https?:\/\/[^\s/?#@]+(\/[^\s?#]*)?|(\*\.)?[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*(:\d{1,5})?)$/i,
                'must be an origin (https://id.example.com), a URL prefix (https://example.com/oauth/) or a host pattern (*.example.com)',
              ),
          )
          .min(1)
          .optional(),
      })
      .strict()
      .superRefine(({ allow }, ctx) => {
        allow?.forEach((entry, i) => {
          if (namesForbiddenAddress(entry))
            ctx.addIssue({
              code: z.ZodIssueCode.custom,
              path: ['allow', i],
              message: `"${entry}" names a link-local, cloud metadata, unspecified, multicast or reserved address (169.254.0.0/16, fe80::/10, fd00:ec2::254 …): no provider lives there and the broker never calls one, listed or not; remove it`,
            })
        })
      })
      .default({}),
    server: z
      .object({
        requestTimeout: z.number().int().min(1000).max(600_000).default(30_000),
        headersTimeout: z.number().int().min(1000).max(600_000).default(10_000),
        keepAliveTimeout: z.number().int().min(100).max(600_000).default(5_000),
        maxConnections: z.number().int().min(1).max(1_000_000).default(10_000),
        // Unset: 0 on a loopback listen, else 5000 (drainDelayMs).
        drainDelay: z.number().int().min(0).max(600_000).optional(),
      })
      .strict()
      .default({}),
    rate: z
      .object({
        store: z.number().int().min(0).max(1_000_000).default(0),
        start: z.number().int().min(0).max(1_000_000).default(0),
        window: z.number().int().min(1000).max(86_400_000).default(60_000),
      })
      .strict()
      .default({}),
  })
  .strict()
  .superRefine((config, ctx) => {
    // Reachable beyond this machine with /store open: anyone who reaches it may store flows.
    if (!isLoopbackListen(config.listen) && !config.api.keys && !config.api.open)
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        path: ['api', 'keys'],
        message: `is required when listen (${config.listen}) is beyond loopback: set api.keys (BROKER_API_KEYS), or api.open: true (--api-open) to leave /store and /result open on purpose`,
      })
    if (config.server.headersTimeout > config.server.requestTimeout)
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        path: ['server', 'headersTimeout'],
        message: `must not exceed server.requestTimeout (${config.server.requestTimeout})`,
      })
  })

/**
 * Whether a providers.allow entry (origin, URL prefix or host) names an address literal the address
 * guard never connects to, in any spelling the URL parser reads (`2852039166` is 169.254.169.254).
 */
function namesForbiddenAddress(entry: string): boolean {
  let host: string
  try {
    host = new URL(/^https?:\/\//i.test(entry) ? entry : `http://${entry}`).hostname
  } catch {
    return false
  }
  return isIpLiteral(host) && classifyAddress(host) === 'forbidden'
}

export { drainDelayMs, isLoopbackListen } from './runtime.js'

export type BrokerConfig = z.infer<typeof configSchema>
/** What a config file, the environment or flags may give: any subset. */
export type ConfigInput = z.input<typeof configSchema>
