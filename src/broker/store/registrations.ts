import type { Redis } from 'ioredis'
import { FlowError, type Registration, type RegistrationGrant, type Registrations } from '../../../flows/contract.js'
import type { Keys } from './keys.js'
import { decodeLink, decodeRegistration, encodeLink, encodeRegistration } from './registration-codec.js'
import type { Sealer } from './seal.js'

/**
 * The broker's client registrations in the store, shared by every instance: one per authorization
 * server, redirect URI and grant, named by a keyed digest of them and sealed like a flow (a dump shows
 * no client_id, secret or server). Each lives until its secret expires, else `ttlSeconds`.
 */
export class RegistrationStore implements Registrations {
  constructor(
    private readonly redis: Redis,
    private readonly keys: Keys,
    private readonly sealer: Sealer,
    /** The config's `registration`: how long a registration is kept, its client_name, how often it is checked. */
    private readonly policy: RegistrationPolicy,
    /**
     * The store's guards: a failure becomes STORE_UNAVAILABLE; a write (of `key`) waits for store.replicas
     * and is accounted for by the embedded store's ledger, a new value (`admit`) against store.memoryLimit.
     */
    private readonly io: { read: Guard; write: WriteGuard },
  ) {}

  get clientName(): string {
    return this.policy.clientName
  }

  get recheckSeconds(): number {
    return this.policy.recheck
  }

  async get(issuer: string, redirectUri: string, grant?: RegistrationGrant): Promise<Registration | undefined> {
    for (let generation = 0; generation < this.sealer.generations; generation++) {
      const sealing = this.sealer.derive('registration', id(issuer, redirectUri, grant), generation)
      const key = this.keys.registration(sealing.name)
      const value = await this.io.read(() => this.redis.get(key))
      if (value === null) continue
      const kept = decodeRegistration(value, (sealed) => this.sealer.open(sealing, key, sealed))
      // A secret about to expire is no use for a flow that takes a minute or two.
      const expires = kept?.client_secret_expires_at ?? 0
      if (kept && (expires === 0 || expires * 1000 > Date.now() + 120_000)) return kept
      return undefined
    }
    return undefined
  }

  /**
   * Counts a new registration against its authorization server's host (registration.perHost within
   * registration.ttl): one who may store flows can name any number of issuer paths of one hostile
   * server, each registered and kept, until every app's /store was refused for a day (STORE_FULL).
   */
  async admitNew(issuer: string): Promise<void> {
    const host = new URL(issuer).host
    const sealing = this.sealer.derive('registration', `count\0${host}`)
    const key = this.keys.registration(sealing.name)
    const ms = this.policy.ttl * 1000
    // The counter is made with its lifetime first (SET NX PX), then counted: never a counter without one.
    const count = await this.io.write(
      key,
      async () => {
        await this.redis.set(key, '0', 'PX', ms, 'NX')
        return this.redis.incr(key)
      },
      { admit: '0000000000' },
    )
    if (count > this.policy.perHost)
      throw new FlowError({
        description: `This broker registered ${this.policy.perHost} clients at ${host} within registration.ttl already (registration.perHost): no more until they lapse`,
      })
  }

  /** A registration's first successful use: it is kept registration.ttl from now, no longer as an unused one. */
  async confirm(issuer: string, redirectUri: string, grant?: RegistrationGrant): Promise<void> {
    const kept = await this.get(issuer, redirectUri, grant)
    if (kept?.unused) await this.put(issuer, redirectUri, { ...kept, unused: undefined }, undefined, grant)
  }

  async put(
    issuer: string,
    redirectUri: string,
    registration: Registration,
    expiresAt?: number,
    grant?: RegistrationGrant,
  ): Promise<void> {
    const sealing = this.sealer.derive('registration', id(issuer, redirectUri, grant))
    const key = this.keys.registration(sealing.name)
    const value = encodeRegistration(registration, (json) => this.sealer.seal(sealing, key, json))
    // An authorization server's expiry shortens the lifetime, never lengthens it: a date centuries
    // ahead (or 1e400, Infinity once parsed) is no PX Redis takes, and no reason to keep a client longer.
    // Never used yet: kept only as long as a flow can take to come back (UNUSED_MS), then confirm() keeps it.
    const ttlMs = Math.min(this.policy.ttl * 1000, registration.unused ? UNUSED_MS : Infinity)
    const ms = expiresAt === undefined ? ttlMs : Math.max(1, Math.floor(Math.min(ttlMs, expiresAt - Date.now())))
    await this.io.write(key, () => this.redis.set(key, value, 'PX', ms), { admit: value })
    // Which server this client_id is of, as long as the registration lives: another server answering
    // the same client_id is refused (a mix-up through registration).
    await this.writeLink(ownerId(registration.client_id), issuer, ms)
  }

  /** The authorization server a registration this broker keeps has `clientId` at, if any. */
  owner(clientId: string): Promise<string | undefined> {
    return this.readLink(ownerId(clientId))
  }

  /**
   * Links a protected resource to the authorization server whose tokens for it this broker delivered,
   * unless it is linked to another one already (the first stays until it lapses); renews the link.
   * Returns the server the resource is linked to after the call.
   */
  async bindResource(resource: string, redirectUri: string, issuer: string): Promise<string> {
    const bound = await this.readLink(resourceId(resource, redirectUri))
    if (bound !== undefined && bound !== issuer) return bound
    await this.writeLink(resourceId(resource, redirectUri), issuer, this.policy.ttl * 1000)
    return issuer
  }

  /** The authorization server a protected resource's delivered tokens came from (bindResource), if linked. */
  resourceIssuer(resource: string, redirectUri: string): Promise<string | undefined> {
    return this.readLink(resourceId(resource, redirectUri))
  }

  private async readLink(id: string): Promise<string | undefined> {
    for (let generation = 0; generation < this.sealer.generations; generation++) {
      const sealing = this.sealer.derive('registration', id, generation)
      const key = this.keys.registration(sealing.name)
      const value = await this.io.read(() => this.redis.get(key))
      if (value !== null) return decodeLink(value, (sealed) => this.sealer.open(sealing, key, sealed))
    }
    return undefined
  }

  private async writeLink(id: string, issuer: string, ms: number): Promise<void> {
    const sealing = this.sealer.derive('registration', id)
    const key = this.keys.registration(sealing.name)
    const value = encodeLink(issuer, (json) => this.sealer.seal(sealing, key, json))
    await this.io.write(key, () => this.redis.set(key, value, 'PX', ms), { admit: value })
  }

  async drop(issuer: string, redirectUri: string, grant?: RegistrationGrant): Promise<void> {
    const names = Array.from({ length: this.sealer.generations }, (_, generation) =>
      this.keys.registration(this.sealer.derive('registration', id(issuer, redirectUri, grant), generation).name),
    )
    // One DEL per key: under Redis Cluster the names sit on different slots.
    await Promise.all(names.map((key) => this.io.write(key, () => this.redis.del(key))))
  }
}

// A registration no flow has used yet lives this long (a flow's store.expire and store.callbackWait fit
// in it with the defaults); its first successful token request keeps it registration.ttl (confirm).
const UNUSED_MS = 15 * 60_000

// A link's id starts with a word no issuer URL starts with, so it never names a registration's key.
const ownerId = (clientId: string) => `owner\0${clientId}`
const resourceId = (resource: string, redirectUri: string) => `resource\0${resource}\0${redirectUri}`

/** What the deployment says about the clients the broker registers (the config's `registration`). */
export interface RegistrationPolicy {
  readonly ttl: number
  readonly clientName: string
  readonly recheck: number
  readonly perHost: number
}

type Guard = <T>(op: () => Promise<T>) => Promise<T>
type WriteGuard = <T>(key: string, op: () => Promise<T>, opts?: { admit?: string }) => Promise<T>

// NUL cannot occur in a URL, so no two pairs make the same id. The code flow's id is the pair alone (as
// kept before client credentials had registrations of their own); another grant's adds its name.
const id = (issuer: string, redirectUri: string, grant: RegistrationGrant = 'authorization_code') =>
  grant === 'authorization_code' ? `${issuer}\0${redirectUri}` : `${issuer}\0${redirectUri}\0${grant}`
