import { cpus } from 'node:os'
import { z } from 'zod'

/** Delivery modes a stored record may ask for; see the README's "Delivery" section. */
export const DELIVERY_MODES = ['query', 'form_post', 'code'] as const
export type DeliveryMode = (typeof DELIVERY_MODES)[number]

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
 * boundary. Objects are strict, so a misspelt key is refused instead of silently ignored.
 */
export const configSchema = z
  .object({
    host: z.string().min(1).default('localhost:3000').describe('Public host (and port) used to build URLs'),
    protocol: z.enum(['http', 'https']).default('http').describe('Public protocol used to build URLs'),
    port: z.number().int().min(0).max(65535).default(3000).describe('Port to listen on'),
    listen: z.string().min(1).default('0.0.0.0').describe('Address to listen on'),
    workers: z.number().int().min(1).max(256).default(cpus().length).describe('Worker processes'),
    pid: z
      .object({
        dir: z
          .string()
          .min(1)
          .default('./')
          .refine((v) => v.endsWith('/'), { message: 'must end with a slash, e.g. "./" or "/var/run/"' })
          .describe('Directory of the .broker.pid file'),
      })
      .strict()
      .default({}),
    store: z
      .object({
        driver: z.enum(['auto', 'redis', 'memory']).default('auto').describe('auto, redis or memory (embedded)'),
        host: z.string().min(1).default('127.0.0.1').describe('Redis host'),
        port: z.number().int().min(1).max(65535).default(6379).describe('Redis port'),
        pass: z.string().optional().describe('Redis password'),
        expire: z.number().int().min(1).max(86_400).default(60).describe('Seconds a stored flow lives'),
        prefix: z.string().default('broker:').describe('Prefix of every Redis key'),
        timeout: z.number().int().min(50).max(60_000).default(1000).describe('Milliseconds a store command may take'),
        url: z
          .string()
          .regex(/^rediss?:\/\/[^\s]+$/, 'must be a redis:// or rediss:// URL')
          .optional()
          .describe('Redis URL (redis://, or rediss:// for TLS); wins over host/port/pass'),
        tls: z
          .object({
            ca: z.string().min(1).optional().describe('CA certificate file (PEM) for rediss://'),
            rejectUnauthorized: z.boolean().default(true),
          })
          .strict()
          .optional(),
        sentinels: z.array(redisNode).min(1).optional().describe('Redis Sentinel nodes, "host:port" each'),
        name: z.string().min(1).optional().describe('Sentinel master name'),
        sentinelPass: z.string().optional().describe('Password of the sentinels'),
        cluster: z.array(redisNode).min(1).optional().describe('Redis Cluster nodes, "host:port" each'),
      })
      .strict()
      .superRefine((store, ctx) => {
        const modes = [store.url && 'url', store.sentinels && 'sentinels', store.cluster && 'cluster'].filter(Boolean)
        if (modes.length > 1) ctx.addIssue({ code: z.ZodIssueCode.custom, message: `use one of url, sentinels, cluster (got ${modes.join(' and ')})` })
        if (store.sentinels && !store.name) ctx.addIssue({ code: z.ZodIssueCode.custom, path: ['name'], message: 'is required with store.sentinels (the master name, e.g. "mymaster")' })
        if ((store.url || store.sentinels || store.cluster) && store.driver === 'memory') {
          ctx.addIssue({ code: z.ZodIssueCode.custom, path: ['driver'], message: 'memory cannot be combined with store.url, store.sentinels or store.cluster' })
        }
      })
      .default({}),
    cookie: z.object({ secret: z.string().min(16).optional().describe('Secret signing the browser-binding cookie') }).strict().default({}),
    session: z.object({ secret: z.string().min(16).optional().describe('Secret signing the OAuth state') }).strict().default({}),
    callbacks: z
      .object({ allow: z.array(z.string().min(1)).optional().describe('Allowed app callbacks: origins or URL prefixes') })
      .strict()
      .default({}),
    delivery: z
      .object({ allow: z.array(z.enum(DELIVERY_MODES)).min(1).default([...DELIVERY_MODES]).describe('Delivery modes records may use') })
      .strict()
      .default({}),
    plugins: z.object({ dir: z.string().min(1).optional().describe('Directory of your own flow plugins') }).strict().default({}),
    provider: z
      .object({ timeout: z.number().int().min(100).max(300_000).default(10_000).describe('Milliseconds a provider may take to answer') })
      .strict()
      .default({}),
    body: z.object({ limit: z.number().int().min(1024).max(10_485_760).default(65_536).describe('Largest request body in bytes') }).strict().default({}),
    log: z
      .object({ level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info').describe('Log level (stderr)') })
      .strict()
      .default({}),
    admin: z
      .object({ key: z.string().min(16).optional().describe('Bearer key of the admin API (/admin/*); without it the admin API is off') })
      .strict()
      .default({}),
    api: z
      .object({ keys: z.array(z.string().min(16)).min(1).optional().describe('Bearer keys that POST /store and POST /result require; without them those routes are open') })
      .strict()
      .default({}),
    rate: z
      .object({
        store: z.number().int().min(0).max(1_000_000).default(0).describe('Requests per client IP per rate.window on POST /store; 0: no limit'),
        start: z.number().int().min(0).max(1_000_000).default(0).describe('Requests per client IP per rate.window on /start; 0: no limit'),
        window: z.number().int().min(1000).max(86_400_000).default(60_000).describe('Milliseconds of the rate limit window'),
      })
      .strict()
      .default({}),
  })
  .strict()

export type BrokerConfig = z.infer<typeof configSchema>
/** What a config file, the environment or flags may give: any subset. */
export type ConfigInput = z.input<typeof configSchema>
