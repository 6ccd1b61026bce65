import { EventEmitter } from 'node:events'

/**
 * The flow events the broker publishes (the spec's "Events: not shown"): the dashboard and logs
 * subscribe to these instead of reading the store.
 */
export const FLOW_EVENT_TYPES = [
  'stored',
  'started',
  'redirected',
  'callback',
  'token_exchanged',
  'delivered',
  'failed',
  'expired',
] as const
export type FlowEventType = (typeof FLOW_EVENT_TYPES)[number]

export interface FlowEvent {
  type: FlowEventType
  hash: string
  plugin: string
  /** Host of the provider the flow talks to, when known. */
  provider?: string
  progress: string
  /** Milliseconds since the epoch. */
  at: number
  expiresAt?: number
  /** Error code, for `failed`. */
  error?: string
  /** Delivery mode, for `delivered`. */
  delivery?: string
}

/** A typed event bus for flow events; one per process. */
export class FlowEvents extends EventEmitter<{ flow: [FlowEvent] }> {
  /** Also hands this process's own events on (to Redis pub/sub, so every instance sees them), while anyone there listens. */
  relay?: (event: FlowEvent) => void
  /** Settles once other processes' events reach this one (set when the first listener subscribes it). */
  subscribed?: Promise<unknown>

  /**
   * Whether anyone would see an event, here or elsewhere. When nobody watches, an event would cost
   * every request and reach no one: publishers check this before they build one.
   */
  get watched(): boolean {
    return this.relay !== undefined || this.listenerCount('flow') > 0
  }

  /** An event of this process: emitted here and relayed. */
  publish(event: Omit<FlowEvent, 'at'>): void {
    if (!this.watched) return
    const full = { ...event, at: Date.now() }
    this.emit('flow', full)
    this.relay?.(full)
  }

  /** An event from another process or instance: emitted here only. */
  receive(event: FlowEvent): void {
    this.emit('flow', event)
  }
}
