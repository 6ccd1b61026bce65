import type { BrokerConfig } from './schema.js'

/** Dotted names of the schema's leaves (`store.expire`, `store.tls.ca`); a list is one leaf. */
type Leaves<T> = {
  [K in keyof T & string]-?: NonNullable<T[K]> extends readonly unknown[]
    ? K
    : NonNullable<T[K]> extends object
      ? `${K}.${Leaves<NonNullable<T[K]>>}`
      : K
}[keyof T & string]
export type ConfigKey = Leaves<BrokerConfig>

/** How a key is documented and set on `broker serve`; its default and env variable come from the schema. */
export interface KeyDoc {
  /** What the key does: the flag's help and docs/configuration.md's "Meaning". */
  help: string
  /** The `broker serve` flag (without --). */
  flag: string
  char?: 'p' | 'w'
  /** The default as a reader should see it, where the value is computed or its absence means something. */
  shown?: string
  /** Help says to prefer the environment variable: flags show in `ps`. */
  secret?: true
}

/** Every key of the schema, each with its help text and flag; a key missing here does not compile. */
export const CONFIG_DOCS = {
  host: {
    flag: 'host',
    help: 'Public host[:port] used to build the start and callback URLs; follows --port when it is a localhost host',
  },
  protocol: { flag: 'protocol', help: 'Public protocol used to build the start and callback URLs' },
  port: { flag: 'port', char: 'p', help: 'Port to listen on' },
  listen: {
    flag: 'listen',
    help: 'Address to listen on; beyond loopback (e.g. 0.0.0.0) needs api.keys or api.open',
  },
  workers: { flag: 'workers', char: 'w', shown: 'CPU count', help: 'Worker processes; 1 with the embedded store' },
  'pid.dir': {
    flag: 'pid-dir',
    help: "Directory of .broker.pid, the primary's PID file (a config file's value ends with /; the flag adds it)",
  },
  'store.driver': {
    flag: 'store',
    help: 'Store driver: auto (Redis when it answers at store.host:store.port within ~0.5 s, else the embedded in-process store), redis (must connect) or memory',
  },
  'store.host': { flag: 'store-host', help: 'Redis host' },
  'store.port': { flag: 'store-port', help: 'Redis port' },
  'store.pass': { flag: 'store-pass', secret: true, help: 'Redis password' },
  'store.expire': { flag: 'expire', help: 'Seconds a stored flow lives until its start URL is visited' },
  'store.callbackWait': {
    flag: 'callback-wait',
    help: "Seconds a started flow waits for the user to come back from the provider's login (MFA, a password manager)",
  },
  'store.prefix': { flag: 'store-prefix', help: 'Prefix of every Redis key' },
  'store.keys': {
    flag: 'store-key',
    secret: true,
    shown: 'session.secret',
    help: 'Secrets that name and seal what the store keeps (HMAC key names, AES-256-GCM values), at least 32 characters each: the first seals, every one opens, so put a new key first to rotate; the same on every instance',
  },
  'store.timeout': {
    flag: 'store-timeout',
    help: 'Milliseconds a store command may take; 503 STORE_UNAVAILABLE after',
  },
  'store.url': {
    flag: 'store-url',
    help: 'Redis URL, redis:// or rediss:// for TLS; wins over store.host and store.port',
  },
  'store.tls.ca': { flag: 'store-tls-ca', help: 'CA certificate file (PEM) for rediss://' },
  'store.tls.rejectUnauthorized': {
    flag: 'store-tls-verify',
    help: 'Verify the Redis TLS certificate; --no-store-tls-verify turns it off',
  },
  'store.sentinels': { flag: 'store-sentinel', help: 'Redis Sentinel nodes, "host:port" each; needs store.name' },
  'store.name': { flag: 'store-name', help: 'Sentinel master name' },
  'store.sentinelPass': { flag: 'store-sentinel-pass', secret: true, help: 'Password of the sentinels' },
  'store.cluster': { flag: 'store-cluster', help: 'Redis Cluster nodes, "host:port" each' },
  'store.replicas': {
    flag: 'store-replicas',
    shown: '1 with Sentinel and a replica, else 0',
    help: 'Replicas that must acknowledge each write (WAIT) before it is answered; 503 STORE_UNAVAILABLE when fewer do within store.timeout. Keeps acknowledged flows through a Sentinel failover',
  },
  'store.replicaShortfall': {
    flag: 'store-replica-shortfall',
    help: 'While fewer replicas acknowledge writes than store.replicas: failover answers them (unreplicated when none) only from a Sentinel switch the broker saw until the replicas are back, 30 s at most, and refuses at other times; refuse answers 503 STORE_UNAVAILABLE until they are back; accept always answers them',
  },
  'store.memoryLimit': {
    flag: 'store-memory-limit',
    help: 'Megabytes of flows (and client registrations) the embedded store keeps; a new flow past it is refused with 503 STORE_FULL',
  },
  'session.secret': {
    flag: 'session-secret',
    secret: true,
    shown: 'generated per run',
    help: "Secret under which the flow's hash is derived from its OAuth state, at least 16 characters; the same on every instance",
  },
  'cookie.secret': {
    flag: 'cookie-secret',
    secret: true,
    shown: 'derived from session.secret',
    help: "Secret that keys the browser-binding cookie set at /start and checked at /callback (its name and its value's HMAC), at least 16 characters; Guardian's cookie.secret; the same on every instance",
  },
  'cookie.previousSecrets': {
    flag: 'cookie-previous-secret',
    secret: true,
    help: 'Older cookie secrets (or the session.secret that keyed cookies before cookie.secret was set) whose cookies /callback still accepts, so flows started before a change complete; new cookies use cookie.secret. Remove them after store.callbackWait',
  },
  'callbacks.allow': {
    flag: 'callbacks-allow',
    shown: 'loopback only',
    help: 'Allowed app callbacks: origins or URL prefixes',
  },
  'delivery.allow': { flag: 'delivery-allow', help: 'Delivery modes records may use' },
  'plugins.dir': { flag: 'plugins-dir', help: 'Directory of your own flow plugins' },
  'provider.timeout': {
    flag: 'provider-timeout',
    help: 'Milliseconds a provider may take to answer; at /callback, the whole token exchange (every request it makes) together',
  },
  'registration.ttl': {
    flag: 'registration-ttl',
    help: 'Seconds a client the broker registered itself (RFC 7591, for a record without client_id) is reused, unless its secret expires sooner',
  },
  'registration.clientName': {
    flag: 'registration-client-name',
    help: 'The client_name of every client the broker registers itself (RFC 7591), what users see on a consent screen; never taken from a record',
  },
  'registration.recheck': {
    flag: 'registration-recheck',
    help: 'Seconds a kept registration the authorization server answered for is trusted before the broker checks again that the server still knows it; 0: before every flow',
  },
  'registration.perHost': {
    flag: 'registration-per-host',
    help: 'Clients the broker registers itself at one authorization server host within registration.ttl, at most; past it /store answers 502 PROVIDER_ERROR naming the host',
  },
  'registration.logoUri': {
    flag: 'registration-logo-uri',
    help: "The logo_uri of the broker's client metadata document (a client ID metadata document, for authorization servers that take them)",
  },
  'registration.clientUri': {
    flag: 'registration-client-uri',
    help: "The client_uri of the broker's client metadata document",
  },
  'body.limit': { flag: 'body-limit', help: 'Largest request body in bytes; 413 above' },
  'log.level': {
    flag: 'log-level',
    help: 'Level of the JSON log lines on stderr; hashes, codes and secrets are never logged at info',
  },
  'admin.key': {
    flag: 'admin-key',
    secret: true,
    shown: 'none (admin API off)',
    help: 'Bearer key of the admin API (/admin/*, for `broker dashboard --attach`), at least 16 characters',
  },
  'api.keys': {
    flag: 'api-key',
    secret: true,
    shown: 'none (routes open)',
    help: 'Bearer keys that POST /store and POST /result require, at least 16 characters each',
  },
  'api.open': {
    flag: 'api-open',
    help: 'Leave POST /store and POST /result open without api.keys while listening beyond loopback',
  },
  'providers.allow': {
    flag: 'providers-allow',
    shown: 'public addresses only',
    help: 'Provider destinations record URLs may name: origins, URL prefixes or host patterns (*.example.com); unset: any public address (loopback and private ones only while listening on loopback); never a link-local or metadata address (refused at start-up)',
  },
  'server.requestTimeout': {
    flag: 'request-timeout',
    help: 'Milliseconds a client may take to send a whole request; 408 and the connection closed after',
  },
  'server.headersTimeout': {
    flag: 'headers-timeout',
    help: "Milliseconds a client may take to send a request's headers",
  },
  'server.keepAliveTimeout': {
    flag: 'keep-alive-timeout',
    help: 'Milliseconds an idle keep-alive connection stays open',
  },
  'server.maxConnections': {
    flag: 'max-connections',
    help: 'Concurrent connections per worker; more are closed at once',
  },
  'server.drainDelay': {
    flag: 'drain-delay',
    shown: '0 on a loopback listen, else 5000',
    help: 'Milliseconds between SIGTERM (or Ctrl-C) and closing the listener: /ping answers 503 at once, so a load balancer takes the instance out before connections are refused; a second signal stops at once',
  },
  'rate.store': { flag: 'rate-store', help: 'Requests per client IP per rate.window on POST /store; 0: no limit' },
  'rate.start': { flag: 'rate-start', help: 'Requests per client IP per rate.window on /start; 0: no limit' },
  'rate.window': { flag: 'rate-window', help: 'Milliseconds of the rate limit window' },
} as const satisfies Record<ConfigKey, KeyDoc>
