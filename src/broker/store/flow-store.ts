import type { Redis } from 'ioredis'
import { BrokerError, brokerError } from '../../errors/index.js'
import {
  CAS_SCRIPT,
  CLAIM_SCRIPT,
  UNCLAIM_SCRIPT,
  UNMOVE_SCRIPT,
  claimable,
  type DecodedFlow,
  type FlowEntry,
  type Progress,
  decodeFlow,
  decodeSealed,
  encodeFlow,
  encodeSealed,
  encodeTransition,
  isFlowValue,
  movedValue,
  progressOfCode,
} from './flow-codec.js'
import { coalesceTurn } from './coalesce.js'
import type { Fence } from './failover.js'
import { type Keys, keys as makeKeys } from './keys.js'
import type { MemoryLedger } from './memory-ledger.js'
import { Shortfall, type ShortfallPolicy } from './shortfall.js'
import { type RegistrationPolicy, RegistrationStore } from './registrations.js'
import { type CapabilityKind, Sealer, type Sealing } from './seal.js'
import { ClearingMap } from '../../../util/clearing-map.js'

export { coalesceTurn } from './coalesce.js'
export { PROGRESS } from './flow-codec.js'
export type { FlowEntry, FlowFailure, FlowFailureCode, Progress } from './flow-codec.js'

type ScriptedRedis = Redis & {
  brokerCas(key: string, from: string, to: string, body: string, found: '0' | '1'): Promise<string | number>
  brokerClaim(key: string, waitMs: number): Promise<string | null>
  brokerUnclaim(key: string, was: string, ms: number, maxTtl: number): Promise<number>
  brokerUnmove(key: string, moved: string, was: string): Promise<number>
}

/** What /start's claim found: the flow as it was, whether it is reusable (never claimed), and its prepared redirect. */
export type Claimed = DecodedFlow

export interface FlowStoreOptions {
  /** Seconds a stored flow lives until /start claims it, and a result lives. */
  expireSeconds: number
  /** Seconds a flow lives once /start claimed it: the user's time at the provider (store.callbackWait). */
  callbackWaitSeconds: number
  /** Prefix of every key (several deployments may share one Redis). */
  prefix?: string
  /** The secrets that name and seal what is kept: the first for what is new, all to find and open (rotation). */
  secrets: readonly string[]
  /** The embedded store's bookkeeping (expiry and size), which a real Redis does itself. */
  ledger?: MemoryLedger
  /** Replicas that must acknowledge each write (WAIT) before it counts; 0: none (store.replicas). */
  replicas?: number
  /** Milliseconds WAIT may take (below store.timeout). */
  waitMs?: number
  /**
   * When fewer replicas than `replicas` acknowledge a write (a failover's old master resyncing, a replica
   * lagging): `refuse` answers STORE_UNAVAILABLE, `accept` answers the write, `failover` (the default)
   * answers it only in the window after a Sentinel switch (store.replicaShortfall; shortfall.ts).
   */
  shortfall?: ShortfallPolicy
  /** Told while writes are answered with fewer replicas than store.replicas (shortfall.ts says how often). */
  warn?: (message: string) => void
  /** Told when the replicas acknowledge again after a failover. */
  info?: (message: string) => void
  /** A Sentinel failover under way (failover.ts): no write is acknowledged until the store is on the new master. */
  fence?: Fence
}

/**
 * The flow records in Redis (or the embedded store): create, read, advance, correlate, results.
 * Nothing is kept readable: names are keyed digests and values are sealed (seal.ts); the flow's
 * layout is flow-codec.ts's alone.
 */
export class FlowStore {
  readonly keys: Keys
  readonly expireSeconds: number
  readonly callbackWaitSeconds: number
  private readonly redis: ScriptedRedis
  private readonly sealer: Sealer
  private readonly ledger: MemoryLedger | undefined
  private readonly replicas: number
  private readonly shortfall: Shortfall
  private readonly fence: Fence | undefined
  private readonly warn: (message: string) => void
  /** The WAIT sent last (settled or not), and the one the writes sent since will share. */
  private waitInFlight: Promise<unknown> = Promise.resolve()
  private nextWait: Promise<number> | undefined
  /**
   * The key of each flow read lately, by hash, for the writes that follow the read (a /callback reads its
   * flow, then moves it to exchanging and to completed): a derivation is an HMAC-SHA512 and a Buffer, and
   * /callback made three where one does (`npm run bench`, the whole flow's CPU profile). Reads derive
   * afresh; only writes take a kept key, of the same generation. Bounded: a miss derives again.
   */
  private readonly readKeys = new ClearingMap<string, Sealing>(256)
  /** What each claim this store made found (for `unstart`), by the Claimed it answered. */
  private readonly claims = new WeakMap<Claimed, Took>()
  private kept: { policy: RegistrationPolicy; store: RegistrationStore } | undefined

  constructor(redis: Redis, opts: FlowStoreOptions) {
    this.keys = makeKeys(opts.prefix ?? 'broker:')
    this.ledger = opts.ledger
    this.replicas = opts.replicas ?? 0
    this.fence = opts.fence
    this.warn = opts.warn ?? (() => undefined)
    this.shortfall = new Shortfall(opts.shortfall ?? 'refuse', this.replicas, opts.waitMs ?? 1000, opts.fence, {
      warn: this.warn,
      info: opts.info ?? (() => undefined),
    })
    this.expireSeconds = opts.expireSeconds
    this.callbackWaitSeconds = opts.callbackWaitSeconds
    this.sealer = new Sealer(opts.secrets)
    this.redis = redis as ScriptedRedis
    if (!('brokerCas' in redis)) {
      redis.defineCommand('brokerCas', { numberOfKeys: 1, lua: CAS_SCRIPT })
      redis.defineCommand('brokerClaim', { numberOfKeys: 1, lua: CLAIM_SCRIPT })
      redis.defineCommand('brokerUnclaim', { numberOfKeys: 1, lua: UNCLAIM_SCRIPT })
      redis.defineCommand('brokerUnmove', { numberOfKeys: 1, lua: UNMOVE_SCRIPT })
    }
  }

  /** Whether a Sentinel failover is under way: writes are refused (STORE_UNAVAILABLE) until it ends. */
  get failingOver(): boolean {
    return this.fence?.fenced ?? false
  }

  /**
   * Whether a Sentinel failover is under way or ended less than `ms` ago: an exchange's owner could not
   * renew its lease meanwhile, so a lease that lapsed then says nothing yet of whether the owner lives.
   */
  failedOverWithin(ms: number): boolean {
    const fence = this.fence
    return !!fence && (fence.fenced || (fence.liftedAt ?? -Infinity) + ms > Date.now())
  }

  /** One store operation: its write joins the others of this event-loop turn; a failure is STORE_UNAVAILABLE. */
  private send<T>(op: () => Promise<T>): Promise<T> {
    coalesceTurn(this.redis)
    return guard(op)
  }

  /**
   * A store operation that writes, acknowledged only on the master the Sentinels name: none is sent
   * while a failover is under way, and one sent before a failover began is not acknowledged (the old
   * master forgets what it took once it is made a replica). `handOut`, `short`: see replicated().
   */
  private async write<T>(op: () => Promise<T>, handOut = false, short?: (acked: number) => void): Promise<T> {
    const fence = this.fence
    if (!fence) return this.replicated(op, handOut, short)
    if (fence.fenced) throw brokerError('storeFailingOver')
    const epoch = fence.epoch
    const result = await this.replicated(op, handOut, short)
    if (!handOut && fence.epoch !== epoch) throw brokerError('storeFailingOver')
    return result
  }

  /**
   * A write with store.replicas: a WAIT follows it in the same socket write (coalesceTurn), and the
   * write counts only once that many replicas have it, so a Sentinel failover cannot forget a flow the
   * broker has answered for. Fewer: STORE_UNAVAILABLE, or answered all the same where
   * store.replicaShortfall says so (shortfall.ts: `accept`, or `failover` just after a switch). `short`:
   * told of the refusal instead, and the write's answer returned (the master carried it out).
   */
  private async replicated<T>(op: () => Promise<T>, handOut: boolean, short?: (acked: number) => void): Promise<T> {
    if (!this.replicas) return this.send(op)
    const plan = this.shortfall.plan()
    if (plan.waitMs === undefined) return this.send(op)
    coalesceTurn(this.redis)
    const written = guard(op)
    const acked = this.acknowledgement(plan.waitMs)
    acked.catch(() => undefined)
    const result = await written
    // `handOut`: a GETDEL that took a one-time value (a result, a kept answer) returns it however the
    // replicas answer: refused now, it would be gone from the master for good and the tokens with it.
    if (handOut) {
      await acked.catch(() => undefined)
      return result
    }
    if (!plan.lenient) {
      const n = short ? await acked.catch(() => 0) : await acked
      if (n >= this.replicas) return result
      if (short) {
        short(n)
        return result
      }
      throw brokerError('storeNotReplicated', { acked: n, replicas: this.replicas })
    }
    // Fewer acknowledgements (or a WAIT that timed out behind others) answer the write all the same.
    this.shortfall.answered(plan, await acked.catch(() => 0))
    return result
  }

  /**
   * A WAIT covering every write sent before it, shared: one is in flight at a time, and the writes sent
   * meanwhile share the next, sent when it returns. A WAIT holds the connection until enough replicas
   * answer or its timeout: one per write, with no replica there (right after a failover), queued up
   * seconds of them on the connection and every command behind them timed out.
   */
  private acknowledgement(waitMs: number): Promise<number> {
    if (this.nextWait) return this.nextWait
    const next = this.waitInFlight.then(() => {
      // Sent now: a write from here on needs a later WAIT.
      this.nextWait = undefined
      return guard(() => this.redis.wait(this.replicas, waitMs))
    })
    this.nextWait = next
    this.waitInFlight = next.catch(() => undefined)
    return next
  }

  /**
   * Every write to the store goes through here, and only writes: `op` as a write (`write`: with
   * store.replicas, a WAIT after it) or, `wait: false`, as a command of its own (`send`). With the
   * embedded store the ledger accounts for it (MemoryLedger's `accounted`): a new value is admitted
   * first (`admit`: STORE_FULL past store.memoryLimit), and what `key` holds afterwards is measured
   * in the store rather than supposed by each caller, so no write path can leave the ledger out:
   * memory-ledger.test.ts drives every one and compares the ledger with the store.
   */
  private stored<T>(key: string, op: () => Promise<T>, opts: StoredWrite = {}): Promise<T> {
    const sent = () => (opts.wait === false ? this.send(op) : this.write(op, opts.handOut, opts.short))
    return this.ledger ? this.ledger.accounted(key, sent, opts.admit) : sent()
  }

  /** The embedded in-process store (ioredis-mock and its ledger), not a Redis server. */
  get embedded(): boolean {
    return this.ledger !== undefined
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
    const created = await this.stored(key, () => this.redis.set(key, value, 'PX', ttl, 'NX'), { admit: value })
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
      if (took) await this.unclaim(hash, took)
      throw err
    }
    if (flow && !flow.reusable && flow.entry.progress === 'stored') {
      flow.entry.expiresAt = Date.now() + waitMs
      if (took) this.claims.set(flow, took)
    }
    return flow
  }

  /**
   * /start answered STORE_UNAVAILABLE after its claim counted (its first step's write did not): puts
   * the flow back as /store left it, as `claim` does for a claim that does not count.
   */
  async unstart(claimed: Claimed): Promise<void> {
    const took = this.claims.get(claimed)
    if (took) await this.unclaim(claimed.entry.hash, took)
  }

  /**
   * Puts back the value `was` a claim of `key` found, with the time it had left (its body's expiry),
   * if the flow is still as the claim or its first step left it. The 503 waits for its first try only;
   * one not acknowledged (by the replicas, or sent as a failover began, or not answered) is made again
   * in the background until it is, or the flow's own expiry, so the replicas agree. The claim was made
   * before its reply came back (`at`): a flow with more time to live than that leaves was claimed
   * again since (the browser's retry at another instance, after a failover), and stays.
   */
  private async unclaim(hash: string, took: Took): Promise<void> {
    const { key, value: was } = took
    const generation = Array.from({ length: this.sealer.generations }, (_, g) => g).find(
      (g) => this.keys.flow(this.sealer.derive('flow', hash, g).name) === key,
    )
    if (!claimable(was) || generation === undefined) return
    const sealing = this.sealer.derive('flow', hash, generation)
    const expiresAt = decodeFlow(hash, was, (sealed) => this.sealer.open(sealing, key, sealed))?.entry.expiresAt
    if (expiresAt === undefined) return
    // Counts once as many replicas as store.replicas have it (or where store.replicaShortfall answers a short
    // WAIT): until then a failover could promote a replica with the claim alone, so it is made again there.
    const undo = async (): Promise<boolean> => {
      let short = false
      const ms = Math.max(1, expiresAt - Date.now())
      const maxTtl = Math.ceil(this.callbackWaitSeconds * 1000 - (performance.now() - took.at)) + TTL_SLACK_MS
      const op = () => this.redis.brokerUnclaim(key, was, ms, maxTtl)
      await this.stored(key, op, { short: () => (short = true) })
      return !short
    }
    await this.undoneUntilCounted(undo, expiresAt, 'a /start', 'its claim')
  }

  /**
   * An undo (`undo` answers whether it counted) that did not count at once is made again in the background
   * every UNDO_RETRY_MS until it does or `expiresAt` passes; only its first try is waited for.
   */
  private async undoneUntilCounted(
    undo: () => Promise<boolean>,
    expiresAt: number,
    request: string,
    what: string,
  ): Promise<void> {
    const counted = () => undo().catch(() => false)
    if (await counted()) return
    this.warn(
      `${request} answered 503 (its write not acknowledged by store.replicas, or a failover began) and undoing ${what} is not acknowledged yet: tried again until it is`,
    )
    void (async () => {
      while (Date.now() < expiresAt) {
        await new Promise((r) => setTimeout(r, UNDO_RETRY_MS).unref())
        if (await counted()) return
      }
      this.warn(`undoing ${what} (${request} answered 503) was not acknowledged before the flow expired`)
    })()
  }

  /**
   * Moves a flow from `from` to the entry's progress atomically, with its data and error. Returns
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
    const read = this.readKeys.get(next.hash)
    const sealing =
      read && read.generation === (next.generation ?? 0) ? read : this.sealer.derive('flow', next.hash, next.generation)
    const key = this.keys.flow(sealing.name)
    const seal = (json: string) => this.sealer.seal(sealing, key, json)
    const [fromCode, toCode, body] = encodeTransition(from, next, seal)
    const undoable = from === 'awaiting_callback' && next.progress === 'exchanging'
    let found: string | undefined
    const op = async () => {
      const answer = await this.redis.brokerCas(key, fromCode, toCode, body, undoable ? '1' : '0')
      if (undoable && isFlowValue(answer)) found = answer
      return answer
    }
    let res: string | number
    try {
      res = await this.stored(key, op, { short })
    } catch (err) {
      if (found) await this.unmove(key, movedValue(found, toCode, body), found, next.expiresAt)
      throw err
    }
    if (res === 'OK' || found) return 'ok'
    if (res === -1) return 'gone'
    return progressOfCode(res) ?? 'failed'
  }

  /**
   * Puts back the value `was` that a move to `moved` found, if the flow still holds exactly `moved`
   * (nobody moved it since, its lease not even renewed), keeping its time to live. Made again until the
   * replicas acknowledge it (or `expiresAt`), so a replica promoted with the move alone is undone too.
   */
  private async unmove(key: string, moved: string, was: string, expiresAt: number): Promise<void> {
    const undo = async (): Promise<boolean> => {
      let short = false
      await this.stored(key, () => this.redis.brokerUnmove(key, moved, was), { short: () => (short = true) })
      return !short
    }
    await this.undoneUntilCounted(undo, expiresAt, 'a /callback', 'its move to exchanging')
  }

  /**
   * Remembers which flow a callback id (an OAuth 1.0a request token) belongs to, for the flow's
   * lifetime. Only once (SET NX): false when the id is bound already, to this flow or another, so a
   * second flow handed the same request token can never take over the first one's callback.
   */
  async correlate(id: string, hash: string, expiresAt: number): Promise<boolean> {
    const ms = Math.max(1, expiresAt - Date.now())
    const sealing = this.sealer.derive('callback', id)
    const key = this.keys.callback(sealing.name)
    const value = encodeSealed(this.sealer.seal(sealing, key, hash))
    return (await this.stored(key, () => this.redis.set(key, value, 'PX', ms, 'NX'))) === 'OK'
  }

  /** The flow hash a callback id belongs to. */
  async correlated(id: string): Promise<string | undefined> {
    return this.openSmall(
      'callback',
      id,
      (name) => this.keys.callback(name),
      (key) => this.redis.get(key),
    )
  }

  /** Keeps a delivered result under a one-time code. */
  async putResult(code: string, result: Record<string, unknown>): Promise<void> {
    const sealing = this.sealer.derive('result', code)
    const key = this.keys.result(sealing.name)
    const value = encodeSealed(this.sealer.seal(sealing, key, JSON.stringify(result)))
    await this.stored(key, () => this.redis.set(key, value, 'EX', this.expireSeconds))
  }

  /** Redeems a one-time result code: the first caller gets the result, later ones nothing. */
  async takeResult(code: string): Promise<Record<string, unknown> | undefined> {
    const json = await this.openSmall(
      'result',
      code,
      (name) => this.keys.result(name),
      (key) => this.redis.getdel(key),
      true,
    )
    return json ? (JSON.parse(json) as Record<string, unknown>) : undefined
  }

  /**
   * Keeps a flow's last answer for `ms`, for a request of the same browser held while the exchange
   * ran (the browser dropped the request that made it): replayed once, by takeReplay.
   */
  async putReplay(hash: string, answer: Record<string, unknown>, ms: number): Promise<void> {
    const sealing = this.sealer.derive('replay', hash)
    const key = this.keys.replay(sealing.name)
    const value = encodeSealed(this.sealer.seal(sealing, key, JSON.stringify(answer)))
    await this.stored(key, () => this.redis.set(key, value, 'PX', ms))
  }

  /** A flow's kept answer, to the first caller only (GETDEL). */
  async takeReplay(hash: string): Promise<Record<string, unknown> | undefined> {
    const json = await this.openSmall(
      'replay',
      hash,
      (name) => this.keys.replay(name),
      (key) => this.redis.getdel(key),
      true,
    )
    return json ? (JSON.parse(json) as Record<string, unknown>) : undefined
  }

  /**
   * Takes a flow's poll lease for `ms` (SET NX PX): every instance shares it, so one poll runs at a
   * time and none comes sooner than the provider asked. When another holds it: the ms it has left,
   * and whether that poll is still running (its lease then lasts until the provider would time out).
   */
  async takePollLease(
    hash: string,
    ms: number,
  ): Promise<{ taken: true } | { taken: false; leftMs: number; running: boolean }> {
    const key = this.keys.poll(this.sealer.derive('poll', hash).name)
    const replies = (await this.stored(
      key,
      () => this.redis.multi().set(key, POLLING, 'PX', ms, 'NX').get(key).pttl(key).exec(),
      { wait: false },
    )) as Array<[unknown, unknown]>
    if (replies[0]?.[1] === 'OK') return { taken: true }
    const left = Number(replies[2]?.[1])
    return {
      taken: false,
      leftMs: Math.max(1, Number.isFinite(left) ? left : ms),
      running: replies[1]?.[1] === POLLING,
    }
  }

  /** Holds a flow's poll lease for `ms` from now: after a poll, the interval before the next. */
  async holdPollLease(hash: string, ms: number): Promise<void> {
    const key = this.keys.poll(this.sealer.derive('poll', hash).name)
    const px = Math.max(1, Math.ceil(ms))
    await this.stored(key, () => this.redis.set(key, WAITING, 'PX', px), { wait: false })
  }

  /**
   * The broker's client registrations (RFC 7591), each kept `policy.ttl` seconds unless its secret expires
   * sooner. Every flow step's context and every /store asks for them: the one for the last policy asked
   * (the config's frozen `registration`) is kept (it holds no state of its own), rather than made per request.
   */
  registrations(policy: RegistrationPolicy): RegistrationStore {
    if (this.kept?.policy !== policy) {
      const store = new RegistrationStore(this.redis, this.keys, this.sealer, policy, {
        read: (op) => this.send(op),
        write: (key, op, opts) => this.stored(key, op, opts),
      })
      this.kept = { policy, store }
    }
    return this.kept.store
  }

  /** Round trip to the store, for readiness checks. */
  async ping(): Promise<void> {
    await this.send(() => this.redis.ping())
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
      const value = await (writes ? this.stored(key, op) : this.send(op))
      if (typeof value !== 'string') continue
      const flow = decodeFlow(hash, value, (sealed) => this.sealer.open(sealing, key, sealed))
      if (flow && generation > 0) flow.entry.generation = generation
      if (flow) this.readKeys.set(hash, sealing)
      return flow
    }
    return undefined
  }

  /**
   * A small sealed value (a correlation, a result) read with `read` under each generation's name;
   * `takes`: `read` takes it (GETDEL), a write handed out whatever the replicas answer.
   */
  private async openSmall(
    kind: CapabilityKind,
    id: string,
    keyOf: (name: string) => string,
    read: (key: string) => Promise<string | null>,
    takes = false,
  ): Promise<string | undefined> {
    if (!knowable(id)) return undefined
    for (let generation = 0; generation < this.sealer.generations; generation++) {
      const sealing = this.sealer.derive(kind, id, generation)
      const key = keyOf(sealing.name)
      const op = () => read(key)
      const sealed = decodeSealed(await (takes ? this.stored(key, op, { handOut: true }) : this.send(op)))
      if (sealed !== undefined) return this.sealer.open(sealing, key, sealed)
    }
    return undefined
  }
}

/** What a claim found: the flow's key and value, and when its reply came (performance.now()). */
type Took = { key: string; value: string; at: number }

/** How a write goes out (FlowStore's `stored`). */
export interface StoredWrite {
  /** The value a new key is about to hold: the embedded store refuses it past store.memoryLimit (STORE_FULL). */
  admit?: string
  /** A GETDEL that takes a one-time value: handed out whatever the replicas answer (see `write`). */
  handOut?: boolean
  /** false: no WAIT for store.replicas (a poll lease). */
  wait?: boolean
  /** Told when fewer replicas than store.replicas acknowledged the write, which is answered all the same. */
  short?: (acked: number) => void
}

// How often an undo (of a /start claim, of a /callback's move to exchanging) that did not count is made again.
const UNDO_RETRY_MS = 100
// Redis's clock and this process's may run apart by a few ms over an undo's wait: a claim's time to live is
// compared with this much room. A retry's claim comes at least a browser's round trip after the 503.
const TTL_SLACK_MS = 20

// A poll lease's value: a poll is running, or the interval after one runs out.
const POLLING = 'p'
const WAITING = 'w'

// Hashes, codes and callback ids the broker makes are 32 characters; a client may send anything.
// Longer than this names nothing, so it is answered as unknown without a store round trip.
const MAX_ID = 128
const knowable = (id: string): boolean => id.length <= MAX_ID

/** Turns a store failure (Redis down, command timeout) into STORE_UNAVAILABLE. */
async function guard<T>(op: () => Promise<T>): Promise<T> {
  try {
    return await op()
  } catch (err) {
    if (err instanceof BrokerError) throw err
    throw brokerError('storeNotAnswering')
  }
}
