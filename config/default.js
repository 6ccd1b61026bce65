// The broker's documented defaults. `broker serve` reads this file when it runs in this folder
// without -c. Every key can also be set with a BROKER_… environment variable (store.expire →
// BROKER_STORE_EXPIRE) or a `broker serve` flag; flags win over the environment, which wins over
// this file. See `broker serve --help`.
import { cpus } from 'node:os'

export default {
  host: 'localhost:3000', // public host (and port) used to build the start and callback URLs
  protocol: 'http', // public protocol: http or https
  port: 3000, // port to listen on
  workers: cpus().length, // worker processes (1 with the embedded store)
  pid: { dir: './' }, // where .broker.pid is written; must end with a slash
  store: {
    driver: 'auto', // auto: Redis when it answers, else the embedded in-process store; or redis, memory
    host: '127.0.0.1',
    port: 6379,
    // pass: 'redis password',
    expire: 60, // seconds a stored flow lives
  },
  // Set both when you run several workers on several machines or instances; otherwise they are
  // generated at start and shared with this instance's workers only.
  cookie: { /* secret: 'at least 16 characters' */ },
  session: { /* secret: 'at least 16 characters' */ },
  // Where the broker may send users back to. Unset: loopback callbacks only.
  callbacks: { /* allow: ['https://app.example.com', 'https://staging.example.com/oauth/'] */ },
}
