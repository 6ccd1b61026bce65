import { randomUUID } from 'node:crypto'
import type { EventEmitter } from 'node:events'
import { Cluster, type Redis } from 'ioredis'
import { FLOW_EVENT_TYPES, type FlowEvent, type FlowEvents } from '../events.js'
import type { Sealer } from './seal.js'

/** How often a process asks Redis whether anyone else subscribes to flow events. */
export const WATCH_POLL_MS = 250

/**
 * Shares flow events between every worker and instance on one Redis through pub/sub, so a
 * dashboard attached to any instance sees the flows of all. Events are best effort: a lost
 * event never affects a flow, whose truth stays in the store.
 *
 * Cost on the hot path: events go out only while some other process subscribes, the events of one
 * tick go out as one PUBLISH, and a process subscribes only once something in it listens (the admin
 * API, a dashboard). While nobody watches, a process sends nothing: a new subscriber says so on the
 * `<channel>:hello` channel, which every process listens to on an idle connection of its own, and
 * only then do publishers poll PUBSUB NUMSUB (every WATCH_POLL_MS) to notice when it has gone. A new
 * subscriber is ready (`events.subscribed`) once every publisher has had time to notice it, so
 * nothing published after that is missed.
 *
 * Events name flows by their hash, a capability: each batch is sealed (seal.ts) under the store's
 * secrets, so a client of Redis that subscribes to the channel learns nothing.
 */
export async function bridgeEvents(
  events: FlowEvents,
  redis: Redis,
  channel: string,
  sealer: Sealer,
): Promise<() => Promise<void>> {
  const origin = randomUUID()
  const sealing = sealer.derive('events', channel)
  // The typed emitter does not list EventEmitter's own 'newListener' event.
  const emitter = events as unknown as EventEmitter
  let sub: Redis | undefined
  let subscribing: Promise<unknown> | undefined
  let ownSubscription = 0
  const subscribe = () => {
    if (sub) return
    emitter.off('newListener', onListener)
    sub = subscriber(redis)
    sub.on('error', () => {})
    sub.on('message', (_channel: string, message: string) => {
      const batch = parse(openBatch(sealer, channel, message))
      if (batch && batch.origin !== origin) for (const event of batch.events) events.receive(event)
    })
    subscribing = sub
      .connect()
      .then(() => sub!.subscribe(channel))
      .then(() => redis.publish(hello, '1'))
      .then(() => {
        ownSubscription = 1
        return new Promise((r) => setTimeout(r, 2 * WATCH_POLL_MS))
      })
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
    redis.publish(channel, sealer.seal(sealing, channel, JSON.stringify({ origin, events: batch }))).catch(() => {})
  }
  const relay = (event: FlowEvent) => {
    if (pending.push(event) === 1) setImmediate(flush)
  }
  let closed = false
  let poll: ReturnType<typeof setInterval> | undefined
  const watch = async () => {
    const others = (await subscribers(redis, channel).catch(() => 1)) - ownSubscription
    if (closed) return
    events.relay = others > 0 ? relay : undefined
    // Polled only while someone watches, to notice when they leave; a new one says hello.
    if (others > 0 && !poll) {
      poll = setInterval(() => void watch(), WATCH_POLL_MS)
      poll.unref()
    } else if (others <= 0 && poll) {
      clearInterval(poll)
      poll = undefined
    }
  }
  const hello = `${channel}:hello`
  const listener = subscriber(redis)
  listener.on('error', () => {})
  listener.on('message', () => void watch())
  await listener
    .connect()
    .then(() => listener.subscribe(hello))
    .catch(() => {})
  await watch()
  return async () => {
    closed = true
    clearInterval(poll)
    await listener.quit().catch(() => listener.disconnect())
    events.relay = undefined
    emitter.off('newListener', onListener)
    if (pending.length) flush()
    await subscribing
    await sub?.quit().catch(() => sub?.disconnect())
  }
}

/** How many connections subscribe to `channel`: on every node of a Cluster (PUBSUB counts per node). */
async function subscribers(redis: Redis, channel: string): Promise<number> {
  const nodes: Redis[] = redis instanceof Cluster ? (redis as unknown as Cluster).nodes('all') : [redis]
  const counts = await Promise.all(
    nodes.map(async (node) => Number(((await node.pubsub('NUMSUB', channel)) as [string, number])[1])),
  )
  return counts.reduce((a, b) => a + b, 0)
}

/** A batch's JSON, opened with whichever of the secrets sealed it. */
function openBatch(sealer: Sealer, channel: string, message: string): string | undefined {
  for (let generation = 0; generation < sealer.generations; generation++) {
    const json = sealer.open(sealer.derive('events', channel, generation), channel, message)
    if (json !== undefined) return json
  }
  return undefined
}

function parse(message: string | undefined): { origin: string; events: FlowEvent[] } | undefined {
  if (message === undefined) return undefined
  try {
    const value = JSON.parse(message) as { origin?: unknown; events?: unknown }
    if (typeof value.origin !== 'string' || !Array.isArray(value.events)) return undefined
    const events = (value.events as Partial<FlowEvent>[]).filter(
      (e): e is FlowEvent =>
        !!e && typeof e.hash === 'string' && FLOW_EVENT_TYPES.includes(e.type as FlowEvent['type']),
    )
    return { origin: value.origin, events }
  } catch {
    return undefined
  }
}

/**
 * A connection of its own for SUBSCRIBE. On Sentinel it follows a switch by ioredis's own detector
 * (+switch-master): a master turned into a replica still takes SUBSCRIBE, so nothing else would move it,
 * and it would hear nothing published on the new master. The store's client is moved by failover.ts.
 */
const subscriber = (redis: Redis): Redis =>
  // A Cluster (typed as a Redis here) takes other arguments, and has no Sentinel.
  (redis as unknown) instanceof Cluster ? redis.duplicate() : redis.duplicate({ failoverDetector: true })
