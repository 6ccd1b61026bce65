import type { Redis } from 'ioredis'
import { brokerError } from '../../errors/index.js'
import {
  type DecodedFlow,
  type FlowEntry,
  type Progress,
  decodeFlow,
  encodeFlow,
  encodeTransition,
  isFlowHeader,
  movedHeader,
  progressOfCode,
  SEALED_UNDER,
} from './flow-codec.js'
import { StoreIo, type StoreIoOptions } from './io.js'
import { type Keys, keys as makeKeys, knowable } from './keys.js'
import { type RegistrationPolicy, RegistrationStore } from './registrations.js'
import { type ScriptedRedis, scripted } from './scripts.js'
import { Sealer } from './seal.js'
import { SmallValues } from './small-values.js'
import { type Took, Undo } from './undo.js'

export { coalesceTurn } from './coalesce.js'
export { PROGRESS } from './flow-codec.js'
export type { FlowEntry, FlowFailure, FlowFailureCode, Progress } from './flow-codec.js'
export type { StoredWrite } from './io.js'

/**
 * What /start's claim found: the flow as it was, whether it is reusable (never claimed), and its prepared
 * redirect; `took`, what the claim took from the store (for `unstart`), when it moved the flow on.
 * Carried on the flow itself, not in a WeakMap keyed by it: a WeakMap's entries kept each claimed value
 * alive through the young generation's collections into the old one (about 1.1 KB a flow promoted,
 * twice the mark-compacts under load: docs/decisions/0006).
 */
export type Claimed = DecodedFlow & { took?: Took }

export interface FlowStoreOptions extends StoreIoOptions {
  /** Seconds a stored flow lives until /start claims it, and a result lives. */
  expireSeconds: number
  /** Seconds a flow lives once /start claimed it: the user's time at the provider (store.callbackWait). */
  callbackWaitSeconds: number
  /** Prefix of every key (several deployments may share one Redis). */
  prefix?: string
  /** The secrets that name and seal what is kept: the first for what is new, all to find and open (rotation). */
  secrets: readonly string[]
}

/**
 * The flow records in Redis (or the embedded store): create, read, claim, advance; and, handed on, the
 * small values beside them (small-values.ts: correlations, results, replays, poll leases) and the client
 * registrations. Every operation goes out through io.ts (every write through its `stored`); a claim or
 * a move that does not count is put back by undo.ts. Nothing is kept readable: names are keyed digests
 * and values are sealed (seal.ts); the flow's layout is flow-codec.ts's alone.
 */
export class FlowStore {
  readonly keys: Keys
  readonly expireSeconds: number
  readonly callbackWaitSeconds: number
  private readonly redis: ScriptedRedis
  private readonly sealer: Sealer
  /** How each operation goes out: every write through its `stored` (the ledger, store.replicas, the fence). */
  private readonly io: StoreIo
  /** Putting back a claim or a move that does not count (undo.ts). */
  private readonly undo: Undo
  /** Correlations, results, replays and poll leases (small-values.ts). */
  private readonly small: SmallValues
  private kept: { policy: RegistrationPolicy; store: RegistrationStore } | undefined

  constructor(redis: Redis, opts: FlowStoreOptions) {
    this.keys = makeKeys(opts.prefix ?? 'broker:')
    this.expireSeconds = opts.expireSeconds
    this.callbackWaitSeconds = opts.callbackWaitSeconds
    this.sealer = new Sealer(opts.secrets)
    this.redis = scripted(redis)
    this.io = new StoreIo(redis, opts)
    const warn = opts.warn ?? (() => undefined)
    this.undo = new Undo(this.redis, this.io, this.sealer, this.keys, this.callbackWaitSeconds, warn)
    this.small = new SmallValues(redis, this.io, this.sealer, this.keys, this.expireSeconds)
  }

  /** Whether a Sentinel failover is under way: writes are refused (STORE_UNAVAILABLE) until it ends. */
  get failingOver(): boolean {
    return this.io.failingOver
  }

  /**
   * Whether a Sentinel failover is under way or ended less than `ms` ago: an exchange's owner could not
   * renew its lease meanwhile, so a lease that lapsed then says nothing yet of whether the owner lives.
   */
  failedOverWithin(ms: number): boolean {
    return this.io.failedOverWithin(ms)
  }

  /** The embedded in-process store (ioredis-mock and its ledger), not a Redis server. */
  get embedded(): boolean {
    return this.io.embedded
  }

  /** The Redis client (or the embedded store's), for plugins that keep their own keys: rate limits. */
  get client(): Redis {
    return this.redis
  }

  /** The key a flow is kept under by one generation of the secrets. */
  flowKey(hash: string, generation = 0): string {
    return this.keys.flow(this.sealer.derive('flow', hash, generation).name)
  }

  /**
   * Stores a new flow for its lifetime; the hash must be new. A reusable flow is never claimed by
   * /start; `redirect` is the first step's, when it ran at /store.
   */
  async create(entry: FlowEntry, opts: { reusable?: boolean; redirect?: string } = {}): Promise<void> {
    const sealing = this.sealer.derive('flow', entry.hash)
    const key = this.keys.flow(sealing.name)
    const flow = { entry, reusable: opts.reusable === true, redirect: opts.redirect }
    const value = encodeFlow(flow, (json) => this.sealer.seal(sealing, key, json))
    const ttl = entry.expiresAt - entry.createdAt
    const created = await this.io.stored(key, () => this.redis.set(key, value, 'PX', ttl, 'NX'), { admit: value })
    if (created !== 'OK') throw brokerError('flowExists')
  }

  /**
   * The flow under `hash`, or undefined when unknown or expired. Its expiry is the key's own (read in
   * the same round trip): a claim extends the key's lifetime without rewriting the sealed body.
   */
  async get(hash: string): Promise<FlowEntry | undefined> {
    let ttl = -1
    const flow = await this.find(hash, async (key) => {
      const [value, pttl] = await Promise.all([this.redis.get(key), this.redis.pttl(key)])
      ttl = pttl
      return value
    })
    if (flow && ttl > 0) flow.entry.expiresAt = Date.now() + ttl
    return flow?.entry
  }

  /**
   * The flow under `hash` as it was, moving a one-shot flow from `stored` to `started` atomically
   * (so a start URL works once) and giving it store.callbackWait from now; undefined when unknown or
   * expired. The entry's expiresAt is the new one, so what /start writes and sets (cookie) follows it.
   *
   * A claim the master carried out but that does not count (fewer replicas than store.replicas
   * acknowledged it, or a failover began meanwhile) is undone before its STORE_UNAVAILABLE is thrown:
   * left `started`, the flow would answer the browser's retry FLOW_STARTED and its app would never
   * hear of it. Undone, the start URL works for the retry, still once.
   */
  async claim(hash: string): Promise<Claimed | undefined> {
    const waitMs = this.callbackWaitSeconds * 1000
    let took: Took | undefined
    let flow: Claimed | undefined
    try {
      flow = await this.find(
        hash,
        async (key) => {
          const value = await this.redis.brokerClaim(key, waitMs)
          if (typeof value === 'string') took = { key, value, at: performance.now() }
          return value
        },
        true,
      )
    } catch (err) {
      if (took) await this.undo.unclaim(hash, took)
      throw err
    }
    if (flow && !flow.reusable && flow.entry.progress === 'stored') {
      flow.entry.expiresAt = Date.now() + waitMs
      if (took) flow.took = took
    }
    return flow
  }

  /**
   * /start answered STORE_UNAVAILABLE after its claim counted (its first step's write did not): puts
   * the flow back as /store left it, as `claim` does for a claim that does not count.
   */
  unstart(claimed: Claimed): Promise<void> {
    return this.undo.unstart(claimed)
  }

  /** The undo of a claim of `hash` still being made again in the background (undo.ts), if any. */
  unclaimingOf(hash: string): Promise<boolean> | undefined {
    return this.undo.unclaimingOf(hash)
  }

  /**
   * Moves a flow from `from` to the entry's progress atomically, with its data and error (a move to
   * `exchanging` keeps the stored data and error, and writes the progress and lease alone). Returns
   * the progress found instead when another request moved it first, or 'gone' when it expired.
   * `short`: a move fewer replicas than store.replicas acknowledged is told there and answered all the
   * same (the master made it), instead of STORE_UNAVAILABLE.
   *
   * /callback's move from `awaiting_callback` to `exchanging` that the master carried out but that does
   * not count (fewer replicas acknowledged it, or a failover began meanwhile) is undone before its
   * STORE_UNAVAILABLE is thrown, as /start's claim is: the provider was not called yet, so the reload
   * can run the exchange, where left `exchanging` it would wait out the lease and fail the flow.
   */
  async advance(from: Progress, next: FlowEntry, short?: (acked: number) => void): Promise<'ok' | 'gone' | Progress> {
    const read = next[SEALED_UNDER]
    const sealing =
      read && read.generation === (next.generation ?? 0) ? read : this.sealer.derive('flow', next.hash, next.generation)
    const key = this.keys.flow(sealing.name)
    const seal = (json: string) => this.sealer.seal(sealing, key, json)
    // The move to `exchanging` and each renewal of its lease change where the flow stands, not what it
    // holds (its data and error): the sealed body stays as stored, and the header alone is rewritten.
    const keepBody = next.progress === 'exchanging'
    const { fromCode, toCode, body, lease } = encodeTransition(from, next, seal, keepBody)
    const undoable = from === 'awaiting_callback' && keepBody
    let found: string | undefined
    const op = async () => {
      const answer = await this.redis.brokerCas(key, fromCode, toCode, body, undoable ? '1' : '0', lease)
      if (undoable && isFlowHeader(answer)) found = answer
      return answer
    }
    let res: string | number
    try {
      res = await this.io.stored(key, op, { short })
    } catch (err) {
      if (found) await this.undo.unmove(key, movedHeader(found, toCode, lease), found, next.expiresAt)
      throw err
    }
    if (res === 'OK' || found) return 'ok'
    if (res === -1) return 'gone'
    return progressOfCode(res) ?? 'failed'
  }

  /**
   * Remembers which flow a callback id (an OAuth 1.0a request token) belongs to, for the flow's lifetime,
   * only once: false when the id is bound already (small-values.ts).
   */
  correlate(id: string, hash: string, expiresAt: number): Promise<boolean> {
    return this.small.correlate(id, hash, expiresAt)
  }

  /** The flow hash a callback id belongs to. */
  correlated(id: string): Promise<string | undefined> {
    return this.small.correlated(id)
  }

  /** Keeps a delivered result under a one-time code. */
  putResult(code: string, result: Record<string, unknown>): Promise<void> {
    return this.small.putResult(code, result)
  }

  /** Redeems a one-time result code: the first caller gets the result, later ones nothing. */
  takeResult(code: string): Promise<Record<string, unknown> | undefined> {
    return this.small.takeResult(code)
  }

  /** Keeps a flow's last answer for `ms`, for a request of the same browser held while the exchange ran. */
  putReplay(hash: string, answer: Record<string, unknown>, ms: number): Promise<void> {
    return this.small.putReplay(hash, answer, ms)
  }

  /** A flow's kept answer, to the first caller only (GETDEL). */
  takeReplay(hash: string): Promise<Record<string, unknown> | undefined> {
    return this.small.takeReplay(hash)
  }

  /** Takes a flow's poll lease for `ms`, or says how long another's has left and whether its poll runs. */
  takePollLease(
    hash: string,
    ms: number,
  ): Promise<{ taken: true } | { taken: false; leftMs: number; running: boolean }> {
    return this.small.takePollLease(hash, ms)
  }

  /** Holds a flow's poll lease for `ms` from now: after a poll, the interval before the next. */
  holdPollLease(hash: string, ms: number): Promise<void> {
    return this.small.holdPollLease(hash, ms)
  }

  /**
   * The broker's client registrations (RFC 7591), each kept `policy.ttl` seconds unless its secret expires
   * sooner. Every flow step's context and every /store asks for them: the one for the last policy asked
   * (the config's frozen `registration`) is kept (it holds no state of its own), rather than made per request.
   */
  registrations(policy: RegistrationPolicy): RegistrationStore {
    if (this.kept?.policy !== policy) {
      const store = new RegistrationStore(this.redis, this.keys, this.sealer, policy, {
        read: (op) => this.io.send(op),
        write: (key, op, opts) => this.io.stored(key, op, opts),
      })
      this.kept = { policy, store }
    }
    return this.kept.store
  }

  /** Round trip to the store, for readiness checks. */
  async ping(): Promise<void> {
    await this.io.send(() => this.redis.ping())
  }

  /**
   * Reads a flow with `read` under each generation's name in turn (one round trip unless the
   * secrets are being rotated and the flow is older, or unknown). A value that does not open is gone.
   */
  private async find(
    hash: string,
    read: (key: string) => Promise<string | null>,
    writes = false,
  ): Promise<Claimed | undefined> {
    if (!knowable(hash)) return undefined
    for (let generation = 0; generation < this.sealer.generations; generation++) {
      const sealing = this.sealer.derive('flow', hash, generation)
      const key = this.keys.flow(sealing.name)
      const op = () => read(key)
      const value = await (writes ? this.io.stored(key, op) : this.io.send(op))
      if (typeof value !== 'string') continue
      const flow = decodeFlow(hash, value, (sealed) => this.sealer.open(sealing, key, sealed))
      if (flow && generation > 0) flow.entry.generation = generation
      if (flow) flow.entry[SEALED_UNDER] = sealing
      return flow
    }
    return undefined
  }
}
