import type { FlowEvent, FlowEvents } from '../../broker/events.js'
import { FlowLog } from '../../broker/flow-log.js'

export type FlowListener = (event: FlowEvent) => void

/**
 * Where the dashboard's flows panel reads flow events from: the broker in this process, or a
 * running broker's admin API. The panel never reads the store.
 */
export interface FlowEventSource {
  /** The flows known now, the latest (merged) event of each, oldest first. */
  snapshot(): Promise<FlowEvent[]>
  subscribe(listener: FlowListener): void
  unsubscribe(listener: FlowListener): void
  /** Stops listening for good (closes a stream). */
  close(): void
}

/** The source for an embedded broker: its in-process FlowEvents, remembered from creation on. */
export function localEventSource(events: FlowEvents): FlowEventSource {
  const log = new FlowLog()
  const listeners = new Set<FlowListener>()
  const onFlow = (event: FlowEvent) => {
    log.add(event)
    for (const listener of listeners) listener(event)
  }
  events.on('flow', onFlow)
  return {
    snapshot: async () => log.snapshot(),
    subscribe: (listener) => void listeners.add(listener),
    unsubscribe: (listener) => void listeners.delete(listener),
    close: () => {
      listeners.clear()
      events.off('flow', onFlow)
    },
  }
}
