import type { Fence } from './failover.js'

/** store.replicaShortfall: what a write fewer replicas acknowledged than store.replicas gets. */
export type ShortfallPolicy = 'refuse' | 'accept' | 'failover'

/**
 * `failover`: how long after a Sentinel switch a short WAIT is answered, at most. The old master comes
 * back as a replica about 10 s after the switch (Sentinel's INFO period) and then needs a full resync
 * (5 s of repl-diskless-sync-delay by default, then the data set): measured 14–16 s on loopback with a
 * small one. Twice that leaves room for a bigger data set or a slower link; a replica not back by then
 * is a replica down, and writes wait for it again as they do in steady state.
 */
export const FAILOVER_WINDOW_MS = 30_000
// In a shortfall the broker answers: how long writes send no WAIT, how long the WAIT that then probes
// may take, and how often the shortfall is told.
const SHORTFALL_MS = 1000
const PROBE_WAIT_MS = 50
const SHORTFALL_WARN_MS = 10_000

/**
 * How the next write waits: no WAIT at all, or one of `waitMs`; `lenient`: fewer acknowledgements are
 * answered; `window`: the switch whose window it is in (`failover`).
 */
export type WaitPlan = { waitMs?: number; lenient: boolean; window?: number }

interface Log {
  warn(message: string): void
  info(message: string): void
}

/**
 * The replica shortfall policy of one flow store: for each write, whether a WAIT that fewer replicas
 * than store.replicas answered is refused (STORE_UNAVAILABLE) or answered all the same, and how long
 * the WAIT may take. `refuse` always refuses; `accept` always answers; `failover` answers only in the
 * window after a switch the fence saw (until the replicas acknowledge again, FAILOVER_WINDOW_MS at
 * most) and refuses at any other time, so a replica down in steady state still holds writes back.
 * Where short answers are taken, a shortfall seen makes the next SHORTFALL_MS of writes send no WAIT,
 * then a PROBE_WAIT_MS one; a new failover's first writes probe straight away.
 */
export class Shortfall {
  /** Until when writes send no WAIT; 0: no shortfall seen since the last full acknowledgement. */
  private shortUntil = 0
  /** `accept`: the fence's epoch last seen; a new one is a failover, after which writes probe first. */
  private epochSeen = 0
  /** `failover`: the switch whose window writes are in, the one the replicas came back for, the one told expired. */
  private windowSeen: number | undefined
  private closedFor: number | undefined
  private expiredFor: number | undefined
  private lastAcked = 0
  private warnedAt = 0

  constructor(
    private readonly policy: ShortfallPolicy,
    private readonly replicas: number,
    private readonly waitMs: number,
    private readonly fence: Fence | undefined,
    private readonly log: Log,
    private readonly now: () => number = Date.now,
  ) {}

  /** Whether short WAITs are answered now (`failover`: within the window of the last switch). */
  private lenient(now: number): boolean {
    if (this.policy !== 'failover') return this.policy === 'accept'
    const at = this.fence?.switchedAt
    if (at === undefined || at === this.closedFor) return false
    if (now < at + FAILOVER_WINDOW_MS) return true
    if (this.windowSeen === at && this.expiredFor !== at) {
      this.expiredFor = at
      this.log.warn(
        `${FAILOVER_WINDOW_MS / 1000} s after the failover's switch only ${this.lastAcked} of the ${this.replicas} replicas store.replicas asks for acknowledge writes: they are refused (503 STORE_UNAVAILABLE) until the replicas are back (store.replicaShortfall failover)`,
      )
    }
    return false
  }

  /** How the next write waits. */
  plan(): WaitPlan {
    const now = this.now()
    if (!this.lenient(now)) return { waitMs: this.waitMs, lenient: false }
    // The first writes on a master a failover just moved to probe first: it has no replica yet.
    if (this.policy === 'accept' && this.fence && this.fence.epoch !== this.epochSeen) {
      this.epochSeen = this.fence.epoch
      this.shortUntil = now
    }
    if (this.policy === 'failover' && this.windowSeen !== this.fence?.switchedAt) {
      this.windowSeen = this.fence?.switchedAt
      this.shortUntil = now
    }
    const window = this.policy === 'failover' ? this.windowSeen : undefined
    if (this.shortUntil > 0 && now < this.shortUntil) return { lenient: true, window }
    return { waitMs: this.shortUntil > 0 ? PROBE_WAIT_MS : this.waitMs, lenient: true, window }
  }

  /** A lenient write's WAIT (planned as `plan`) answered `acked` replicas (0 when it failed, e.g. timed out behind others). */
  answered(plan: WaitPlan, acked: number): void {
    const now = this.now()
    this.lastAcked = acked
    if (acked >= this.replicas) {
      this.shortUntil = 0
      const at = plan.window
      if (at !== undefined && this.closedFor !== at) {
        this.closedFor = at
        this.log.info(
          `the replicas acknowledge writes again ${now - at} ms after the failover's switch: writes wait for them again`,
        )
      }
      return
    }
    this.shortUntil = now + SHORTFALL_MS
    if (now - this.warnedAt < SHORTFALL_WARN_MS) return
    this.warnedAt = now
    this.log.warn(
      this.policy === 'failover'
        ? `writes answered with ${acked} of the ${this.replicas} replicas store.replicas asks for after a failover (the old master resyncing), until they are back, ${FAILOVER_WINDOW_MS / 1000} s after the switch at most (store.replicaShortfall failover)`
        : `writes answered with ${acked} of the ${this.replicas} replicas store.replicas asks for (a failover's old master resyncing, or a replica lagging); store.replicaShortfall is accept`,
    )
  }
}
