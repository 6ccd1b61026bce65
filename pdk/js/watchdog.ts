/** The timeout of a plugin phase that never finishes (a hung event), for every running phase at once. */
interface Watch {
  deadline: number
  fire: () => void
}

/**
 * One timer for every phase that is running, for the timeout of a hung plugin: a phase only
 * joins a set (the per-phase setTimeout was the third cost of a replay in the bench's profile).
 */
export const watchdog = {
  watching: new Set<Watch>(),
  timer: undefined as NodeJS.Timeout | undefined,
  at: Infinity,
  add(ms: number, fire: () => void): Watch {
    const w = { deadline: performance.now() + ms, fire }
    this.watching.add(w)
    if (this.timer && w.deadline >= this.at) this.timer.ref()
    else this.arm(w.deadline)
    return w
  },
  remove(w: Watch): void {
    this.watching.delete(w)
    // an idle timer must not keep the process alive
    if (this.watching.size === 0) this.timer?.unref()
  },
  arm(at: number): void {
    if (this.timer) clearTimeout(this.timer)
    this.at = at
    this.timer = setTimeout(() => this.sweep(), Math.max(0, at - performance.now()))
  },
  sweep(): void {
    this.timer = undefined
    this.at = Infinity
    const now = performance.now()
    let next = Infinity
    for (const w of this.watching) {
      if (w.deadline <= now) {
        this.watching.delete(w)
        w.fire()
      } else next = Math.min(next, w.deadline)
    }
    if (next !== Infinity) this.arm(next)
  },
}
