import { claimable, decodeFlow, type DecodedFlow } from './flow-codec.js'
import type { StoreIo } from './io.js'
import type { Keys } from './keys.js'
import type { ScriptedRedis } from './scripts.js'
import type { Sealer } from './seal.js'

/** What a claim found: the flow's key and value, and when its reply came (performance.now()). */
export type Took = { key: string; value: string; at: number }

/**
 * The undo paths of the flow store: a write the master carried out that does not count (fewer replicas
 * than store.replicas acknowledged it, or a failover began meanwhile) is put back before its request
 * answers 503, where left it would make the browser's retry fail: /start's claim (and its first step's
 * write, `unstart`) and /callback's move to `exchanging` (the provider not called yet). An undo that does
 * not count at once is made again in the background until it does, so the replicas agree.
 */
export class Undo {
  /** Undos of claims made again in the background, by flow hash: each settles true once it counted. */
  private readonly unclaiming = new Map<string, Promise<boolean>>()

  constructor(
    private readonly redis: ScriptedRedis,
    private readonly io: StoreIo,
    private readonly sealer: Sealer,
    private readonly keys: Keys,
    /** store.callbackWait: the time to live a claim gives a flow. */
    private readonly callbackWaitSeconds: number,
    private readonly warn: (message: string) => void,
  ) {}

  /**
   * The undo of a claim of `hash` this store is still making again (a failover under way when /start
   * answered 503): it settles true once the flow is back as /store left it, false when the flow expired first.
   */
  unclaimingOf(hash: string): Promise<boolean> | undefined {
    return this.unclaiming.get(hash)
  }

  /**
   * /start answered STORE_UNAVAILABLE after its claim counted (its first step's write did not): puts
   * the flow back as /store left it, as a claim that does not count is (`unclaim`). A flow this store
   * did not claim is left as it is.
   */
  async unstart(claimed: DecodedFlow & { took?: Took }): Promise<void> {
    const { took } = claimed
    if (took) await this.unclaim(claimed.entry.hash, took)
  }

  /**
   * Puts back the value `was` a claim of `key` found, with the time it had left (its body's expiry),
   * if the flow is still as the claim or its first step left it. The 503 waits for its first try only;
   * one not acknowledged (by the replicas, or sent as a failover began, or not answered) is made again
   * in the background until it is, or the flow's own expiry, so the replicas agree. The claim was made
   * before its reply came back (`at`): a flow with more time to live than that leaves was claimed
   * again since (the browser's retry at another instance, after a failover), and stays.
   */
  async unclaim(hash: string, took: Took): Promise<void> {
    const { key, value: was } = took
    const generation = Array.from({ length: this.sealer.generations }, (_, g) => g).find(
      (g) => this.keys.flow(this.sealer.derive('flow', hash, g).name) === key,
    )
    if (!claimable(was) || generation === undefined) return
    const sealing = this.sealer.derive('flow', hash, generation)
    const expiresAt = decodeFlow(hash, was, (sealed) => this.sealer.open(sealing, key, sealed))?.entry.expiresAt
    if (expiresAt === undefined) return
    // Counts once as many replicas as store.replicas have it (or where store.replicaShortfall answers a short
    // WAIT): until then a failover could promote a replica with the claim alone, so it is made again there.
    const undo = async (): Promise<boolean> => {
      let short = false
      const ms = Math.max(1, expiresAt - Date.now())
      const maxTtl = Math.ceil(this.callbackWaitSeconds * 1000 - (performance.now() - took.at)) + TTL_SLACK_MS
      const op = () => this.redis.brokerUnclaim(key, was, ms, maxTtl)
      await this.io.stored(key, op, { short: () => (short = true) })
      return !short
    }
    const retried = (await this.undoneUntilCounted(undo, expiresAt, 'a /start', 'its claim'))?.retries
    if (retried) {
      this.unclaiming.set(hash, retried)
      void retried.then(() => this.unclaiming.get(hash) === retried && this.unclaiming.delete(hash))
    }
  }

  /**
   * Puts back the header `was` that a move to `moved` (a header: the move kept the body) found, if the
   * flow's header is still exactly `moved` (nobody moved it since, its lease not even renewed), keeping
   * its body and its time to live. Made again until the
   * replicas acknowledge it (or `expiresAt`), so a replica promoted with the move alone is undone too.
   */
  async unmove(key: string, moved: string, was: string, expiresAt: number): Promise<void> {
    const undo = async (): Promise<boolean> => {
      let short = false
      await this.io.stored(key, () => this.redis.brokerUnmove(key, moved, was), { short: () => (short = true) })
      return !short
    }
    await this.undoneUntilCounted(undo, expiresAt, 'a /callback', 'its move to exchanging')
  }

  /**
   * An undo (`undo` answers whether it counted) that did not count at once is made again in the background
   * every UNDO_RETRY_MS until it does or `expiresAt` passes; only its first try is waited for. Returns the
   * background retries (settling true once one counted), or undefined when the first try counted.
   */
  private async undoneUntilCounted(
    undo: () => Promise<boolean>,
    expiresAt: number,
    request: string,
    what: string,
  ): Promise<{ retries: Promise<boolean> } | undefined> {
    const counted = () => undo().catch(() => false)
    if (await counted()) return undefined
    this.warn(
      `${request} answered 503 (its write not acknowledged by store.replicas, or a failover began) and undoing ${what} is not acknowledged yet: tried again until it is`,
    )
    const retries = (async () => {
      while (Date.now() < expiresAt) {
        await new Promise((r) => setTimeout(r, UNDO_RETRY_MS).unref())
        if (await counted()) return true
      }
      this.warn(`undoing ${what} (${request} answered 503) was not acknowledged before the flow expired`)
      return false
    })()
    return { retries }
  }
}

// How often an undo (of a /start claim, of a /callback's move to exchanging) that did not count is made again.
const UNDO_RETRY_MS = 100
// Redis's clock and this process's may run apart by a few ms over an undo's wait: a claim's time to live is
// compared with this much room. A retry's claim comes at least a browser's round trip after the 503.
const TTL_SLACK_MS = 20
