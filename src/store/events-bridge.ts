import { randomUUID } from 'node:crypto'
import type { EventEmitter } from 'node:events'
import type { Redis } from 'ioredis'
import { FLOW_EVENT_TYPES, type FlowEvent, type FlowEvents } from '../events.js'

/**
 * Shares flow events between every worker and instance on one Redis through pub/sub, so a
 * dashboard attached to any instance sees the flows of all. Events are best effort: a lost
 * event never affects a flow, whose truth stays in the store.
 *
 * Cost on the hot path: the events of one tick go out as one PUBLISH (under load that is many
 * requests' worth), and a process subscribes only once something in it listens to flow events
 * (the admin API, a dashboard); a plain worker only publishes.
 */
export async function bridgeEvents(events: FlowEvents, redis: Redis, channel: string): Promise<() => Promise<void>> {
  const origin = randomUUID()
  // The typed emitter does not list EventEmitter's own 'newListener' event.
  const emitter = events as unknown as EventEmitter
  let sub: Redis | undefined
  let subscribing: Promise<unknown> | undefined
  const subscribe = () => {
    if (sub) return
    emitter.off('newListener', onListener)
    sub = redis.duplicate()
    sub.on('error', () => {})
    sub.on('message', (_channel: string, message: string) => {
      const batch = parse(message)
      if (batch && batch.origin !== origin) for (const event of batch.events) events.receive(event)
    })
    subscribing = sub
      .connect()
      .then(() => sub!.subscribe(channel))
      .catch(() => {})
    events.subscribed = subscribing
  }
  const onListener = (name: string | symbol) => void (name === 'flow' && subscribe())
  if (events.listenerCount('flow') > 0) subscribe()
  else emitter.on('newListener', onListener)

  let pending: FlowEvent[] = []
  const flush = () => {
    if (!pending.length) return
    const batch = pending
    pending = []
    redis.publish(channel, JSON.stringify({ origin, events: batch })).catch(() => {})
  }
  events.relay = (event) => {
    if (pending.push(event) === 1) setImmediate(flush)
  }
  return async () => {
    events.relay = undefined
    emitter.off('newListener', onListener)
    if (pending.length) flush()
    await subscribing
    await sub?.quit().catch(() => sub?.disconnect())
  }
}

function parse(message: string): { origin: string; events: FlowEvent[] } | undefined {
  try {
    const value = JSON.parse(message) as { origin?: unknown; events?: unknown }
    if (typeof value.origin !== 'string' || !Array.isArray(value.events)) return undefined
    const events = (value.events as Partial<FlowEvent>[]).filter((e): e is FlowEvent => !!e && typeof e.hash === 'string' && FLOW_EVENT_TYPES.includes(e.type as FlowEvent['type']))
    return { origin: value.origin, events }
  } catch {
    return undefined
  }
}
