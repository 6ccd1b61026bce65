import type { Redis } from 'ioredis'
import { decodeSealed, encodeSealed } from './flow-codec.js'
import type { StoreIo } from './io.js'
import { type Keys, knowable } from './keys.js'
import type { CapabilityKind, Sealer } from './seal.js'

/**
 * The small values kept beside the flows, each under its own key: which flow a callback id belongs to,
 * a result under its one-time code, a flow's last answer kept for a replay, and a device flow's poll
 * lease. Named by keyed digests and sealed as the flows are (seal.ts); FlowStore hands them out.
 */
export class SmallValues {
  constructor(
    private readonly redis: Redis,
    private readonly io: StoreIo,
    private readonly sealer: Sealer,
    private readonly keys: Keys,
    /** store.expire: how long a result is kept. */
    private readonly expireSeconds: number,
  ) {}

  /**
   * Remembers which flow a callback id (an OAuth 1.0a request token) belongs to, for the flow's
   * lifetime. Only once (SET NX): false when the id is bound already, to this flow or another, so a
   * second flow handed the same request token can never take over the first one's callback.
   */
  async correlate(id: string, hash: string, expiresAt: number): Promise<boolean> {
    const ms = Math.max(1, expiresAt - Date.now())
    const sealing = this.sealer.derive('callback', id)
    const key = this.keys.callback(sealing.name)
    const value = encodeSealed(this.sealer.seal(sealing, key, hash))
    return (await this.io.stored(key, () => this.redis.set(key, value, 'PX', ms, 'NX'))) === 'OK'
  }

  /** The flow hash a callback id belongs to. */
  async correlated(id: string): Promise<string | undefined> {
    return this.openSmall(
      'callback',
      id,
      (name) => this.keys.callback(name),
      (key) => this.redis.get(key),
    )
  }

  /** Keeps a delivered result under a one-time code. */
  async putResult(code: string, result: Record<string, unknown>): Promise<void> {
    const sealing = this.sealer.derive('result', code)
    const key = this.keys.result(sealing.name)
    const value = encodeSealed(this.sealer.seal(sealing, key, JSON.stringify(result)))
    await this.io.stored(key, () => this.redis.set(key, value, 'EX', this.expireSeconds))
  }

  /** Redeems a one-time result code: the first caller gets the result, later ones nothing. */
  takeResult(code: string): Promise<Record<string, unknown> | undefined> {
    return this.takeJson('result', code, (name) => this.keys.result(name))
  }

  /**
   * Keeps a flow's last answer for `ms`, for a request of the same browser held while the exchange
   * ran (the browser dropped the request that made it): replayed once, by takeReplay.
   */
  async putReplay(hash: string, answer: Record<string, unknown>, ms: number): Promise<void> {
    const sealing = this.sealer.derive('replay', hash)
    const key = this.keys.replay(sealing.name)
    const value = encodeSealed(this.sealer.seal(sealing, key, JSON.stringify(answer)))
    await this.io.stored(key, () => this.redis.set(key, value, 'PX', ms))
  }

  /** A flow's kept answer, to the first caller only (GETDEL). */
  takeReplay(hash: string): Promise<Record<string, unknown> | undefined> {
    return this.takeJson('replay', hash, (name) => this.keys.replay(name))
  }

  /**
   * Takes a flow's poll lease for `ms` (SET NX PX): every instance shares it, so one poll runs at a
   * time and none comes sooner than the provider asked. When another holds it: the ms it has left,
   * and whether that poll is still running (its lease then lasts until the provider would time out).
   */
  async takePollLease(
    hash: string,
    ms: number,
  ): Promise<{ taken: true } | { taken: false; leftMs: number; running: boolean }> {
    const key = this.keys.poll(this.sealer.derive('poll', hash).name)
    const replies = (await this.io.stored(
      key,
      () => this.redis.multi().set(key, POLLING, 'PX', ms, 'NX').get(key).pttl(key).exec(),
      { wait: false },
    )) as Array<[unknown, unknown]>
    if (replies[0]?.[1] === 'OK') return { taken: true }
    const left = Number(replies[2]?.[1])
    return {
      taken: false,
      leftMs: Math.max(1, Number.isFinite(left) ? left : ms),
      running: replies[1]?.[1] === POLLING,
    }
  }

  /** Holds a flow's poll lease for `ms` from now: after a poll, the interval before the next. */
  async holdPollLease(hash: string, ms: number): Promise<void> {
    const key = this.keys.poll(this.sealer.derive('poll', hash).name)
    const px = Math.max(1, Math.ceil(ms))
    await this.io.stored(key, () => this.redis.set(key, WAITING, 'PX', px), { wait: false })
  }

  /** A kept JSON object taken (GETDEL) by the first caller: a result, a replay. */
  private async takeJson(
    kind: CapabilityKind,
    id: string,
    keyOf: (name: string) => string,
  ): Promise<Record<string, unknown> | undefined> {
    const json = await this.openSmall(kind, id, keyOf, (key) => this.redis.getdel(key), true)
    return json ? (JSON.parse(json) as Record<string, unknown>) : undefined
  }

  /**
   * A small sealed value (a correlation, a result) read with `read` under each generation's name;
   * `takes`: `read` takes it (GETDEL), a write handed out whatever the replicas answer.
   */
  private async openSmall(
    kind: CapabilityKind,
    id: string,
    keyOf: (name: string) => string,
    read: (key: string) => Promise<string | null>,
    takes = false,
  ): Promise<string | undefined> {
    if (!knowable(id)) return undefined
    for (let generation = 0; generation < this.sealer.generations; generation++) {
      const sealing = this.sealer.derive(kind, id, generation)
      const key = keyOf(sealing.name)
      const op = () => read(key)
      const sealed = decodeSealed(await (takes ? this.io.stored(key, op, { handOut: true }) : this.io.send(op)))
      if (sealed !== undefined) return this.sealer.open(sealing, key, sealed)
    }
    return undefined
  }
}

// A poll lease's value: a poll is running, or the interval after one runs out.
const POLLING = 'p'
const WAITING = 'w'
