import type { ConfigKey } from './keys.js'

/** One option of Mashape Guardian's server configuration and the broker key that takes it. */
export interface GuardianKey {
  guardian: string
  broker: ConfigKey
  /** What differs, if anything; empty when the key means the same. */
  note: string
}

/**
 * Guardian's option table (its README's server configuration), each under the broker's name for it.
 * Every one is spelt alike, so a Guardian config file starts unchanged; test/guardian-config.test.ts
 * starts a broker from one, and docs/configuration.md's "Coming from Guardian" table is written from this.
 */
export const GUARDIAN_KEYS: readonly GuardianKey[] = [
  { guardian: 'host', broker: 'host', note: '' },
  { guardian: 'protocol', broker: 'protocol', note: '`http` or `https`' },
  {
    guardian: 'port',
    broker: 'port',
    note: 'listens on `listen` (default `127.0.0.1`; beyond loopback needs `api.keys` or `api.open`)',
  },
  { guardian: 'workers', broker: 'workers', note: '1 with the embedded store' },
  { guardian: 'pid.dir', broker: 'pid.dir', note: 'ends with a slash, as in Guardian' },
  { guardian: 'store.host', broker: 'store.host', note: 'Redis, as in Guardian; without one, the embedded store' },
  { guardian: 'store.port', broker: 'store.port', note: '' },
  { guardian: 'store.pass', broker: 'store.pass', note: '' },
  { guardian: 'store.expire', broker: 'store.expire', note: 'seconds until the start URL is visited' },
  {
    guardian: 'cookie.secret',
    broker: 'cookie.secret',
    note: 'keys the cookie binding the browser to its flow; at least 16 characters; `cookie.previousSecrets` to rotate',
  },
  {
    guardian: 'session.secret',
    broker: 'session.secret',
    note: 'names and (without `store.keys`) seals the stored flows; at least 16 characters; the same on every instance',
  },
]
