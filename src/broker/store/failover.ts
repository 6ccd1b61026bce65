import { isIP } from 'node:net'
import type { Redis } from 'ioredis'
import type { BrokerConfig } from '../../config/schema.js'
import { socketOf } from './coalesce.js'

type StoreConfig = BrokerConfig['store']
type Node = { host: string; port: number }

/** Whether writes may be acknowledged now, and a count that moves whenever a failover begins. */
export interface Fence {
  /** A failover of the master is under way, or the client is not yet on the master it ended with. */
  readonly fenced: boolean
  /** Bumped when a failover begins: a write sent under another epoch is not acknowledged. */
  readonly epoch: number
  /** When (ms since the epoch) the last failover's fence lifted; unset before the first. */
  readonly liftedAt?: number
  /**
   * When the client last reached a master a failover switched to (an aborted failover is no switch):
   * the new master has no replica yet (store.replicaShortfall `failover`). Unset before the first.
   */
  readonly switchedAt?: number
}

export interface FailoverWatch extends Fence {
  close(): Promise<void>
}

// Sentinel events (each is its own channel) that say a failover of a master has begun: the old master
// still takes writes until Sentinel turns it into a replica, seconds after the switch, and forgets them
// then. The leader publishes these at least one timer tick (100 ms) before it promotes a replica; from
// +promoted-slave on, Sentinel names the promoted replica as the master (get-master-addr-by-name).
const BEGUN = /^\+(try-failover|elected-leader|failover-state-|selected-slave)/
// How long a failover may go without a +switch-master or an abort before the sentinels are asked.
const ASK_AFTER_MS = 2000

/**
 * Watches the Sentinels of `store` for failovers of the master `client` writes to. From the moment
 * one begins until `client` is connected to the master it ended with, `fenced` is true: the flow store
 * acknowledges no write meanwhile (a write the old master took would be lost when it becomes a
 * replica). At `+promoted-slave` (or `+switch-master`, from a Sentinel that did not lead the failover)
 * the client reconnects at once, and ioredis asks a Sentinel where the master is now: the promoted
 * replica, from then on. Every configured Sentinel is watched: only the failover's leader says it began.
 */
export async function watchFailovers(
  store: StoreConfig,
  client: Redis,
  log: { warn(message: string): void; info(message: string): void },
): Promise<FailoverWatch> {
  const { Redis } = await import('ioredis')
  const name = store.name!
  const nodes: Node[] = store.sentinels!
  const open = new Set<number>() // the Sentinels whose failover has begun and not ended
  let epoch = 0
  let target: Node | undefined // the master a failover ended with, until the client is on it
  const replaced = new Set<string>() // old masters (ip:port) whose replica was promoted, until +switch-master
  let since = 0
  let liftedAt: number | undefined
  let switchedAt: number | undefined
  let moved = false // the failover under way switched masters (not aborted)
  let asking: ReturnType<typeof setInterval> | undefined

  const connect = (node: Node) =>
    new Redis({
      host: node.host,
      port: node.port,
      password: store.sentinelPass,
      lazyConnect: true,
      connectTimeout: Math.max(500, store.timeout),
      commandTimeout: store.timeout,
      retryStrategy: (times: number) => Math.min(100 * times, 1000),
    })

  const onMaster = (node: Node) => {
    const socket = socketOf(client)
    return (
      client.status === 'ready' &&
      socket?.remotePort === node.port &&
      (socket.remoteAddress === node.host || !isIP(node.host))
    )
  }
  const settle = () => {
    if (open.size) return
    if (target && !onMaster(target)) {
      // Reconnected where a Sentinel that had not heard of the switch yet pointed: again.
      if (client.status === 'ready') client.disconnect(true)
      return
    }
    if (target)
      log.info(
        `the store is on the new master ${target.host}:${target.port}, ${Date.now() - since} ms after the failover began`,
      )
    target = undefined
    // A 'ready' without a failover under way lifts nothing.
    if (since) liftedAt = Date.now()
    if (since && moved) switchedAt = liftedAt
    moved = false
    since = 0
    clearInterval(asking)
    asking = undefined
  }
  const begin = (sentinel: number) => {
    if (!open.size && !target) {
      since = Date.now()
      log.warn(`Sentinel: a failover of ${name} began; writes are refused until the store is on the new master`)
      asking = setInterval(() => void ask(), ASK_AFTER_MS)
      asking.unref()
    }
    if (!open.has(sentinel)) epoch++
    open.add(sentinel)
  }
  const switched = (node: Node) => {
    open.clear()
    if (!target && onMaster(node)) {
      // Already there (ioredis reconnected by itself): a switch if a failover was under way, else a repeat.
      if (since) moved = true
      return
    }
    moved = true
    if (!since) since = Date.now()
    epoch++
    // settle() drops the connection to the old master, which would go on answering: ioredis then
    // reconnects (its own retryStrategy) to the master the Sentinel names now.
    target = node
  }
  // A +switch-master missed (a Sentinel connection down at that moment): ask every Sentinel; once none
  // has a failover under way and they name one master, that is the one to be on.
  const ask = async () => {
    const answers = await Promise.all(
      nodes.map(async (node) => {
        const c = connect(node)
        c.on('error', () => {})
        try {
          const fields = (await c.connect().then(() => c.call('SENTINEL', 'MASTER', name))) as string[]
          const info = Object.fromEntries(fields.flatMap((v, i) => (i % 2 ? [] : [[v, fields[i + 1]]])))
          return { inProgress: String(info.flags).includes('failover_in_progress'), at: `${info.ip}:${info.port}` }
        } catch {
          return undefined
        } finally {
          c.disconnect()
        }
      }),
    )
    const known = answers.filter((a) => a !== undefined)
    const named = new Set(known.map((a) => a.at))
    if (!known.length || known.some((a) => a.inProgress) || named.size !== 1) return
    const [host, port] = [...named][0]!.split(':')
    switched({ host: host!, port: Number(port) })
    settle()
  }

  client.on('ready', settle)
  const subscribers = nodes.map((node, sentinel) => {
    const sub = connect(node)
    sub.on('error', () => {})
    sub.on('pmessage', (_pattern: string, event: string, message: string) => {
      const words = message.split(' ')
      if (event === '+switch-master') {
        if (words[0] !== name) return
        // Sentinel's events name the new master from now on: one naming the old one is a new failover.
        replaced.clear()
        switched({ host: words[3]!, port: Number(words[4]) })
        return settle()
      }
      // `master <name> <ip> <port>`, or `slave <ip:port> <ip> <port> @ <master name> <ip> <port>`.
      const at = words[0] === 'master' ? 1 : words.indexOf('@') + 1
      if (at === 0 || words[at] !== name) return
      const master = `${words[at + 1]}:${words[at + 2]}`
      if (event === '+promoted-slave') {
        // The rest of this failover (other replicas reconfigured, +failover-end) names the old master.
        replaced.add(master)
        switched({ host: words[2]!, port: Number(words[3]) })
        return settle()
      }
      if (BEGUN.test(event) && !replaced.has(master)) begin(sentinel)
      else if (event.startsWith('-failover-abort')) {
        open.delete(sentinel)
        settle()
      }
    })
    return sub
  })
  await Promise.all(
    subscribers.map((sub) =>
      sub
        .connect()
        .then(() => sub.psubscribe('+*', '-failover-abort*'))
        .catch(() => undefined),
    ),
  )
  return {
    get fenced() {
      return open.size > 0 || target !== undefined
    },
    get epoch() {
      return epoch
    },
    get liftedAt() {
      return liftedAt
    },
    get switchedAt() {
      return switchedAt
    },
    async close() {
      clearInterval(asking)
      client.off('ready', settle)
      for (const sub of subscribers) sub.disconnect()
    },
  }
}
