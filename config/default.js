// The broker's documented defaults: the same values as the schema (src/config/schema.ts), which a
// test checks. `broker serve` reads this file when it runs in this folder without -c. Every key can
// also be set with a BROKER_… environment variable (store.expire → BROKER_STORE_EXPIRE) or a
// `broker serve` flag; flags win over the environment, which wins over this file. The README's
// configuration table and `broker serve --help` say what each key does.
import { cpus } from 'node:os'

export default {
  host: 'localhost:3000', // public host (and port) used to build the start and callback URLs
  protocol: 'http', // public protocol: http or https
  port: 3000, // port to listen on
  listen: '127.0.0.1', // address to listen on; beyond loopback needs api.keys (or api.open: true)
  workers: cpus().length, // worker processes (1 with the embedded store)
  pid: { dir: './' }, // where .broker.pid is written; must end with a slash
  store: {
    driver: 'auto', // auto: Redis when it answers, else the embedded in-process store; or redis, memory
    host: '127.0.0.1',
    port: 6379,
    // pass: 'redis password',
    expire: 60, // seconds a stored flow lives until its start URL is visited
    callbackWait: 600, // seconds a started flow waits for the user to come back from the provider
    prefix: 'broker:', // prefix of every Redis key
    timeout: 1000, // milliseconds a store command may take
    memoryLimit: 128, // megabytes the embedded store keeps; a new flow past it gets 503 STORE_FULL
    // replicas: 1, // replicas that must acknowledge each write (WAIT); unset: 1 with Sentinel and a replica, else 0
    replicaShortfall: 'failover', // fewer replicas acknowledge a write: answered from a Sentinel switch until they are back (30 s at most), else 503; 'refuse': 503; 'accept': answered
    // One of url, sentinels or cluster instead of host and port:
    // url: 'rediss://user:pass@redis.example:6380', tls: { ca: 'ca.pem', rejectUnauthorized: true },
    // sentinels: ['10.0.0.1:26379', '10.0.0.2:26379'], name: 'mymaster', sentinelPass: '…',
    // cluster: ['10.0.0.1:7000', '10.0.0.2:7000', '10.0.0.3:7000'],
  },
  // Set it when you run several instances on one store; otherwise it is generated at start and
  // shared with this instance's workers only.
  session: {/* secret: 'at least 16 characters' */},
  // Where the broker may send users back to. Unset: loopback callbacks only.
  callbacks: {/* allow: ['https://app.example.com', 'https://staging.example.com/oauth/'] */},
  delivery: { allow: ['query', 'form_post', 'code'] }, // delivery modes records may use
  plugins: {/* dir: 'my-flows/' */}, // your own flow plugins
  provider: { timeout: 10000 }, // milliseconds a provider may take to answer
  registration: { ttl: 86400, clientName: 'broker', recheck: 0, perHost: 64 }, // seconds a client the broker registered itself (RFC 7591) is reused
  body: { limit: 65536 }, // largest request body in bytes
  log: { level: 'info' }, // fatal, error, warn, info, debug, trace or silent
  admin: {/* key: 'at least 16 characters' */}, // without it the admin API is off
  // Without keys POST /store and POST /result are open: allowed on loopback, or beyond it with open: true.
  api: { open: false /* , keys: ['at least 16 characters'] */ },
  // Where record URLs may point. Unset: public addresses (loopback and private ones only while listening on loopback).
  providers: {/* allow: ['https://accounts.example.com', 'https://api.example.com/oauth/', '*.example.org'] */},
  // Slow clients: whole request, headers, idle keep-alive (ms); connections per worker.
  server: {
    requestTimeout: 30000,
    headersTimeout: 10000,
    keepAliveTimeout: 5000,
    maxConnections: 10000,
    // drainDelay: 5000, // milliseconds /ping answers 503 before the listener closes on SIGTERM; unset: 0 on a loopback listen, else 5000
  },
  rate: { store: 0, start: 0, window: 60000 }, // requests per client IP per window (ms) on /store and /start; 0: no limit
}
