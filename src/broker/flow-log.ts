import type { FlowEvent } from './events.js'

/** How long a flow stays listed after it expired, so "expired" can be seen before it goes. */
const KEEP_AFTER_EXPIRY_MS = 5 * 60_000

/**
 * The current state of recent flows, built from flow events alone (never from the store): the
 * latest event of each hash, merged so fields an event lacks (provider, expiresAt) are kept. Flows
 * stay in the order they were first seen (their creation): a list drawn from it does not reorder
 * on every event, so a selection made by row position still points at the flow it was made on.
 */
export class FlowLog {
  private readonly flows = new Map<string, FlowEvent>()

  constructor(private readonly max = 500) {}

  /** Records an event; returns the merged state of its flow. */
  add(event: FlowEvent): FlowEvent {
    const merged = mergeFlow(this.flows.get(event.hash), event)
    // Map.set on a known key keeps its place: the flow stays where it was created.
    this.flows.set(event.hash, merged)
    this.prune(event.at)
    return merged
  }

  /**
   * Adds flows known from before (a snapshot, oldest first) ahead of the ones seen since, which were
   * created later; a flow in both keeps the snapshot's place and the later events' state.
   */
  addOlder(events: readonly FlowEvent[]): void {
    const newer = [...this.flows.values()]
    this.flows.clear()
    for (const event of events) this.flows.set(event.hash, mergeFlow(this.flows.get(event.hash), event))
    for (const event of newer) this.flows.set(event.hash, mergeFlow(this.flows.get(event.hash), event))
    this.prune(Date.now())
  }

  /** The flows known, oldest (first seen) first. */
  snapshot(now = Date.now()): FlowEvent[] {
    this.prune(now)
    return [...this.flows.values()]
  }

  private prune(now: number): void {
    for (const [hash, flow] of this.flows) {
      if (this.flows.size > this.max || (flow.expiresAt !== undefined && flow.expiresAt + KEEP_AFTER_EXPIRY_MS < now))
        this.flows.delete(hash)
    }
  }
}

/** Merges an event into the flow it belongs to, keeping fields the event lacks (provider, expiresAt). */
export function mergeFlow(before: FlowEvent | undefined, event: FlowEvent): FlowEvent {
  const defined = Object.fromEntries(Object.entries(event).filter(([, v]) => v !== undefined))
  return { ...before, ...defined } as FlowEvent
}
