import { Flags } from '@oclif/core'
import { BrokerCommand } from '../src/cli/base-command.js'
import type { ConfigInput } from '../src/config/schema.js'
import { type ServeResult, serve } from '../src/services/serve/index.js'

export default class Serve extends BrokerCommand {
  static summary = 'Run the OAuth broker: a primary process and its workers.'
  static description = `Settings come from, highest first: these flags, BROKER_* environment variables (store.expire → BROKER_STORE_EXPIRE, callbacks.allow → BROKER_CALLBACKS_ALLOW as a comma list), the config file (-c, else ./config/default.js when it exists), then built-in defaults.

Store: with --store auto (the default) the broker uses Redis when it answers at store.host:store.port within half a second, otherwise an embedded in-process store (one worker only). SIGTERM or SIGINT drains requests in flight, closes the store, removes <pid.dir>.broker.pid and exits 0.`

  static examples = [
    '<%= config.bin %> serve',
    '<%= config.bin %> serve -c config/production.js --workers 4',
    'BROKER_STORE_EXPIRE=120 <%= config.bin %> serve --store redis --store-host 10.0.0.5',
    '<%= config.bin %> serve --store memory --port 8080 --host broker.example.com --protocol https',
  ]

  static flags = {
    config: Flags.string({ char: 'c', summary: 'Config file (.js, .mjs, .cjs, .json), relative to the current directory.' }),
    port: Flags.integer({ char: 'p', summary: 'Port to listen on (port, default 3000).', min: 0, max: 65535 }),
    listen: Flags.string({ summary: 'Address to listen on (listen, default 0.0.0.0).' }),
    host: Flags.string({ summary: 'Public host[:port] used to build start and callback URLs (host, default localhost:3000).' }),
    protocol: Flags.string({ summary: 'Public protocol (protocol, default http).', options: ['http', 'https'] }),
    workers: Flags.integer({ char: 'w', summary: 'Worker processes (workers, default: CPU count).', min: 1 }),
    'pid-dir': Flags.string({ summary: 'Directory of .broker.pid, ending with / (pid.dir, default ./).' }),
    store: Flags.string({ summary: 'Store driver (store.driver, default auto).', options: ['auto', 'redis', 'memory'] }),
    'store-host': Flags.string({ summary: 'Redis host (store.host, default 127.0.0.1).' }),
    'store-port': Flags.integer({ summary: 'Redis port (store.port, default 6379).', min: 1, max: 65535 }),
    'store-pass': Flags.string({ summary: 'Redis password (store.pass); prefer BROKER_STORE_PASS.' }),
    'store-url': Flags.string({ summary: 'Redis URL, redis:// or rediss:// for TLS (store.url); wins over --store-host/--store-port.' }),
    'store-sentinel': Flags.string({ summary: 'A Redis Sentinel "host:port"; repeat for more (store.sentinels). Needs --store-name.', multiple: true }),
    'store-name': Flags.string({ summary: 'Sentinel master name (store.name).' }),
    'store-cluster': Flags.string({ summary: 'A Redis Cluster node "host:port"; repeat for more (store.cluster).', multiple: true }),
    'store-prefix': Flags.string({ summary: 'Prefix of every Redis key (store.prefix, default broker:).' }),
    'store-timeout': Flags.integer({ summary: 'Milliseconds a store command may take (store.timeout, default 1000).', min: 50 }),
    'store-sentinel-pass': Flags.string({ summary: 'Password of the sentinels (store.sentinelPass); prefer BROKER_STORE_SENTINELPASS.' }),
    'store-tls-ca': Flags.string({ summary: 'CA certificate file (PEM) for rediss:// (store.tls.ca).' }),
    'store-tls-verify': Flags.boolean({ summary: 'Verify the Redis TLS certificate (store.tls.rejectUnauthorized, default true); --no-store-tls-verify turns it off.', allowNo: true }),
    expire: Flags.integer({ summary: 'Seconds a stored flow lives (store.expire, default 60).', min: 1 }),
    'cookie-secret': Flags.string({ summary: 'Secret signing the browser-binding cookie (cookie.secret, at least 16 characters; default: generated per run); prefer BROKER_COOKIE_SECRET.' }),
    'session-secret': Flags.string({ summary: 'Secret signing the OAuth state (session.secret, at least 16 characters; default: generated per run); prefer BROKER_SESSION_SECRET.' }),
    'callbacks-allow': Flags.string({ summary: 'Allowed app callback origin or URL prefix; repeat for more (callbacks.allow). Default: loopback only.', multiple: true }),
    'delivery-allow': Flags.string({ summary: 'Delivery mode records may use; repeat for more (delivery.allow).', multiple: true, options: ['query', 'form_post', 'code'] }),
    'plugins-dir': Flags.string({ summary: 'Directory of your own flow plugins (plugins.dir).' }),
    'provider-timeout': Flags.integer({ summary: 'Milliseconds a provider may take to answer (provider.timeout, default 10000).', min: 100 }),
    'body-limit': Flags.integer({ summary: 'Largest request body in bytes (body.limit, default 65536).', min: 1024 }),
    'log-level': Flags.string({ summary: 'Log level on stderr (log.level, default info).', options: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] }),
    'api-key': Flags.string({ summary: 'Bearer key that POST /store and POST /result require; repeat for more (api.keys, at least 16 characters); prefer BROKER_API_KEYS. Open without it.', multiple: true }),
    'rate-store': Flags.integer({ summary: 'Requests per client IP per --rate-window on POST /store (rate.store, default 0: no limit).', min: 0 }),
    'rate-start': Flags.integer({ summary: 'Requests per client IP per --rate-window on /start (rate.start, default 0: no limit).', min: 0 }),
    'rate-window': Flags.integer({ summary: 'Milliseconds of the rate limit window (rate.window, default 60000).', min: 1000 }),
    'admin-key': Flags.string({ summary: 'Bearer key of the admin API for `broker dashboard --attach` (admin.key, at least 16 characters); prefer BROKER_ADMIN_KEY. Off without it.' }),
  }

  async run(): Promise<ServeResult> {
    const { flags } = await this.parse(Serve)
    const overrides: ConfigInput = {
      port: flags.port,
      listen: flags.listen,
      host: flags.host,
      protocol: flags.protocol as ConfigInput['protocol'],
      workers: flags.workers,
      pid: flags['pid-dir'] === undefined ? undefined : { dir: flags['pid-dir'] },
      store: {
        driver: flags.store as 'auto' | 'redis' | 'memory' | undefined,
        host: flags['store-host'],
        port: flags['store-port'],
        pass: flags['store-pass'],
        prefix: flags['store-prefix'],
        url: flags['store-url'],
        sentinels: flags['store-sentinel'],
        name: flags['store-name'],
        cluster: flags['store-cluster'],
        expire: flags.expire,
        timeout: flags['store-timeout'],
        sentinelPass: flags['store-sentinel-pass'],
        // Only when asked: a tls object, even an empty one, turns TLS on.
        tls: flags['store-tls-ca'] === undefined && flags['store-tls-verify'] === undefined ? undefined : { ca: flags['store-tls-ca'], rejectUnauthorized: flags['store-tls-verify'] },
      },
      cookie: { secret: flags['cookie-secret'] },
      session: { secret: flags['session-secret'] },
      callbacks: { allow: flags['callbacks-allow'] },
      delivery: { allow: flags['delivery-allow'] as Array<'query' | 'form_post' | 'code'> | undefined },
      plugins: { dir: flags['plugins-dir'] },
      provider: { timeout: flags['provider-timeout'] },
      body: { limit: flags['body-limit'] },
      log: { level: flags['log-level'] as 'info' | undefined },
      admin: { key: flags['admin-key'] },
      api: { keys: flags['api-key'] },
      rate: { store: flags['rate-store'], start: flags['rate-start'], window: flags['rate-window'] },
    }
    return serve({ configFile: flags.config, flags: overrides })
  }
}
