import { randomUUID } from 'node:crypto'
import type { Redis } from 'ioredis'
import { FLOW_EVENT_TYPES, type FlowEvent, type FlowEvents } from '../events.js'

/**
 * Shares flow events between every worker and instance on one Redis through pub/sub, so a
 * dashboard attached to any instance sees the flows of all. Events are best effort: a lost
 * event never affects a flow, whose truth stays in the store.
 */
export async function bridgeEvents(events: FlowEvents, redis: Redis, channel: string): Promise<() => Promise<void>> {
  const origin = randomUUID()
  const sub = redis.duplicate()
  sub.on('error', () => {})
  sub.on('message', (_channel: string, message: string) => {
    const parsed = parse(message)
    if (parsed && parsed.origin !== origin) events.receive(parsed.event)
  })
  await sub.connect().catch(() => {})
  await sub.subscribe(channel).catch(() => {})
  events.relay = (event) => {
    redis.publish(channel, JSON.stringify({ origin, event })).catch(() => {})
  }
  return async () => {
    events.relay = undefined
    await sub.quit().catch(() => sub.disconnect())
  }
}

function parse(message: string): { origin: string; event: FlowEvent } | undefined {
  try {
    const value = JSON.parse(message) as { origin?: unknown; event?: Partial<FlowEvent> }
    const e = value.event
    if (typeof value.origin !== 'string' || !e || typeof e.hash !== 'string' || !FLOW_EVENT_TYPES.includes(e.type as FlowEvent['type'])) return undefined
    return { origin: value.origin, event: e as FlowEvent }
  } catch {
    return undefined
  }
}
