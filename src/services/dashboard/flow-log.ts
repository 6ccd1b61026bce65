import type { FlowEvent } from '../../events.js'

/** How long a flow stays listed after it expired, so "expired" can be seen before it goes. */
const KEEP_AFTER_EXPIRY_MS = 5 * 60_000

/**
 * The current state of recent flows, built from flow events alone (never from the store): the
 * latest event of each hash, merged so fields an event lacks (provider, expiresAt) are kept.
 */
export class FlowLog {
  private readonly flows = new Map<string, FlowEvent>()

  constructor(private readonly max = 500) {}

  /** Records an event; returns the merged state of its flow. */
  add(event: FlowEvent): FlowEvent {
    const before = this.flows.get(event.hash)
    const merged = { ...before, ...stripUndefined(event) } as FlowEvent
    this.flows.delete(event.hash)
    this.flows.set(event.hash, merged)
    this.prune(event.at)
    return merged
  }

  /** The flows known, oldest first. */
  snapshot(now = Date.now()): FlowEvent[] {
    this.prune(now)
    return [...this.flows.values()]
  }

  private prune(now: number): void {
    for (const [hash, flow] of this.flows) {
      if (this.flows.size > this.max || (flow.expiresAt !== undefined && flow.expiresAt + KEEP_AFTER_EXPIRY_MS < now)) this.flows.delete(hash)
    }
  }
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>
}
