import type { Redis } from 'ioredis'
import { BrokerError, brokerError } from '../../errors/index.js'
import { coalesceTurn } from './coalesce.js'
import type { Fence } from './failover.js'
import type { MemoryLedger } from './memory-ledger.js'
import { Shortfall, type ShortfallPolicy, type WaitPlan } from './shortfall.js'

/** How the store's operations go out: the embedded store's ledger, store.replicas and a Sentinel failover's fence. */
export interface StoreIoOptions {
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

/** How a write goes out (StoreIo's `stored`). */
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

/**
 * How every operation of the flow store reaches Redis (or the embedded store): a read as a command of its
 * own (`send`), a write through `stored`, which accounts for it in the embedded store's ledger and, with
 * store.replicas, counts it only once the replicas acknowledge it (WAIT), never during a Sentinel failover.
 * A store that fails or does not answer is STORE_UNAVAILABLE either way.
 */
export class StoreIo {
  private readonly ledger: MemoryLedger | undefined
  private readonly replicas: number
  private readonly shortfall: Shortfall
  private readonly fence: Fence | undefined
  /** The WAIT sent last (settled or not), and the one the writes sent since will share. */
  private waitInFlight: Promise<unknown> = Promise.resolve()
  private nextWait: Promise<number> | undefined

  constructor(
    private readonly redis: Redis,
    opts: StoreIoOptions,
  ) {
    this.ledger = opts.ledger
    this.replicas = opts.replicas ?? 0
    this.fence = opts.fence
    this.shortfall = new Shortfall(opts.shortfall ?? 'refuse', this.replicas, opts.waitMs ?? 1000, opts.fence, {
      warn: opts.warn ?? (() => undefined),
      info: opts.info ?? (() => undefined),
    })
  }

  /** The embedded in-process store (ioredis-mock and its ledger), not a Redis server. */
  get embedded(): boolean {
    return this.ledger !== undefined
  }

  /** Whether a Sentinel failover is under way: writes are refused (STORE_UNAVAILABLE) until it ends. */
  get failingOver(): boolean {
    return this.fence?.fenced ?? false
  }

  /** Whether a Sentinel failover is under way or ended less than `ms` ago (FlowStore's `failedOverWithin`). */
  failedOverWithin(ms: number): boolean {
    const fence = this.fence
    return !!fence && (fence.fenced || (fence.liftedAt ?? -Infinity) + ms > Date.now())
  }

  /** One store operation: its write joins the others of this event-loop turn; a failure is STORE_UNAVAILABLE. */
  send<T>(op: () => Promise<T>): Promise<T> {
    coalesceTurn(this.redis)
    return guard(op)
  }

  /**
   * Every write to the store goes through here, and only writes: `op` as a write (`write`: with
   * store.replicas, a WAIT after it) or, `wait: false`, as a command of its own (`send`). With the
   * embedded store the ledger accounts for it (MemoryLedger's `accounted`): a new value is admitted
   * first (`admit`: STORE_FULL past store.memoryLimit), and what `key` holds afterwards is measured
   * in the store rather than supposed by each caller, so no write path can leave the ledger out:
   * memory-ledger.test.ts drives every one and compares the ledger with the store.
   */
  stored<T>(key: string, op: () => Promise<T>, opts: StoredWrite = {}): Promise<T> {
    const sent = () => (opts.wait === false ? this.send(op) : this.write(op, opts.handOut, opts.short))
    return this.ledger ? this.ledger.accounted(key, sent, opts.admit) : sent()
  }

  /**
   * A store operation that writes, acknowledged only on the master the Sentinels name: none is sent
   * while a failover is under way, and one sent before a failover began is not acknowledged (the old
   * master forgets what it took once it is made a replica). `handOut`, `short`: see replicated().
   */
  private write<T>(op: () => Promise<T>, handOut = false, short?: (acked: number) => void): Promise<T> {
    // Without Sentinel or replicas (the common case) a write is one command: no async layer of its own,
    // each of which cost a request promises and microtask turns (bench/instructions.ts).
    const fence = this.fence
    if (!fence) return this.replicated(op, handOut, short)
    return this.fenced(fence, op, handOut, short)
  }

  private async fenced<T>(fence: Fence, op: () => Promise<T>, handOut: boolean, short?: (acked: number) => void) {
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
  private replicated<T>(op: () => Promise<T>, handOut: boolean, short?: (acked: number) => void): Promise<T> {
    if (!this.replicas) return this.send(op)
    const plan = this.shortfall.plan()
    const waitMs = plan.waitMs
    if (waitMs === undefined) return this.send(op)
    return this.waited(op, plan, waitMs, handOut, short)
  }

  private async waited<T>(
    op: () => Promise<T>,
    plan: WaitPlan,
    waitMs: number,
    handOut: boolean,
    short?: (acked: number) => void,
  ): Promise<T> {
    coalesceTurn(this.redis)
    const written = guard(op)
    const acked = this.acknowledgement(waitMs)
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
}

/** Turns a store failure (Redis down, command timeout) into STORE_UNAVAILABLE. One `then`, not an async function. */
function guard<T>(op: () => Promise<T>): Promise<T> {
  try {
    return op().then(undefined, unavailable)
  } catch (err) {
    return Promise.reject(unavailableError(err))
  }
}

const unavailableError = (err: unknown) => (err instanceof BrokerError ? err : brokerError('storeNotAnswering'))
const unavailable = (err: unknown): never => {
  throw unavailableError(err)
}
