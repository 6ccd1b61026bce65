/**
 * Where the kit, ngx.now/ngx.time/os.time, the log's timestamps and the database's ttl read the time.
 * A replay reads the wall clock unless its fixture says when the request arrives (`time`); a spec
 * run reads a virtual clock that stands still until a spec sleeps, so a test waiting for a ttl or a
 * rate-limiting window advances the clock instead of waiting, and two runs see the same times.
 */

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number
  /** ngx.sleep: the virtual clock moves on by `ms`; the wall clock does nothing (nothing waits in a replay). */
  sleep(ms: number): void
}

/** The machine's clock. */
export const wallClock: Clock = { now: () => Date.now(), sleep: () => undefined }

/** A clock that stands at `startMs` and moves only when slept on. */
export class VirtualClock implements Clock {
  constructor(private ms: number) {}
  now(): number {
    return this.ms
  }
  sleep(ms: number): void {
    if (Number.isFinite(ms) && ms > 0) this.ms += ms
  }
}

/** A fixture's clock: virtual from its `time` (seconds since the epoch), else the wall clock. */
export const clockAt = (seconds: number | undefined): Clock =>
  seconds === undefined ? wallClock : new VirtualClock(seconds * 1000)
