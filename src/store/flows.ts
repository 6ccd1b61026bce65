import type { Redis } from 'ioredis'
import type { FlowRecord } from '../../flows/contract.js'
import { BrokerError } from '../errors.js'
import { type Keys, keys as makeKeys } from './keys.js'

export const PROGRESS = ['stored', 'started', 'awaiting_callback', 'exchanging', 'completed', 'failed'] as const
export type Progress = (typeof PROGRESS)[number]

/** One stored flow, as kept under its hash. */
export interface FlowEntry {
  hash: string
  plugin: string
  record: FlowRecord
  progress: Progress
  createdAt: number
  expiresAt: number
  /** What the flow's steps saved (PKCE verifier, cookie nonce, request token secret …). */
  data: Record<string, unknown>
  error?: { code: string; description: string }
}

// Compare-and-set on the flow's progress: the one atomic step that makes hashes and callbacks
// single use across workers and instances. Returns 'OK', the current progress, or -1 (gone).
const CAS = `local p = redis.call('HGET', KEYS[1], 'progress')
if not p then return -1 end
if p ~= ARGV[1] then return p end
redis.call('HSET', KEYS[1], 'progress', ARGV[2], 'entry', ARGV[3])
return 'OK'`

const CREATE = `if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'progress', ARGV[1], 'entry', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1`

type ScriptedRedis = Redis & {
  brokerCas(key: string, from: string, to: string, entry: string): Promise<string | number>
  brokerCreate(key: string, progress: string, entry: string, ttlMs: number): Promise<number>
}

/** The flow records in Redis (or the embedded store): create, read, advance, correlate, results. */
export class FlowStore {
  readonly keys: Keys
  private readonly redis: ScriptedRedis

  constructor(
    redis: Redis,
    readonly expireSeconds: number,
    prefix = 'broker:',
  ) {
    this.keys = makeKeys(prefix)
    this.redis = redis as ScriptedRedis
    if (!('brokerCas' in redis)) {
      redis.defineCommand('brokerCas', { numberOfKeys: 1, lua: CAS })
      redis.defineCommand('brokerCreate', { numberOfKeys: 1, lua: CREATE })
    }
  }

  /** The Redis client (or the embedded store's), for plugins that keep their own keys: rate limits. */
  get client(): Redis {
    return this.redis
  }

  /** Stores a new flow for `expireSeconds`; the hash must be new. */
  async create(entry: FlowEntry): Promise<void> {
    const ttlMs = entry.expiresAt - entry.createdAt
    const created = await guard(() => this.redis.brokerCreate(this.keys.flow(entry.hash), entry.progress, JSON.stringify(entry), ttlMs))
    if (created !== 1) throw new BrokerError('INTERNAL', 'A flow with this hash exists already.')
  }

  /** The flow under `hash`, or undefined when unknown or expired. */
  async get(hash: string): Promise<FlowEntry | undefined> {
    const [entry, progress] = await guard(() => this.redis.hmget(this.keys.flow(hash), 'entry', 'progress'))
    if (!entry) return undefined
    const parsed = JSON.parse(entry) as FlowEntry
    parsed.progress = (progress as Progress) ?? parsed.progress
    return parsed
  }

  /**
   * Moves a flow from `from` to the entry's progress atomically. Returns the progress found instead
   * when another request moved it first, or 'gone' when it expired meanwhile.
   */
  async advance(from: Progress, next: FlowEntry): Promise<'ok' | 'gone' | Progress> {
    const res = await guard(() => this.redis.brokerCas(this.keys.flow(next.hash), from, next.progress, JSON.stringify(next)))
    if (res === 'OK') return 'ok'
    if (res === -1) return 'gone'
    return res as Progress
  }

  /** Remembers which flow a callback id (state, request token) belongs to, for the flow's lifetime. */
  async correlate(id: string, hash: string, expiresAt: number): Promise<void> {
    const ms = Math.max(1, expiresAt - Date.now())
    await guard(() => this.redis.set(this.keys.callback(id), hash, 'PX', ms))
  }

  /** The flow hash a callback id belongs to. */
  async correlated(id: string): Promise<string | undefined> {
    return (await guard(() => this.redis.get(this.keys.callback(id)))) ?? undefined
  }

  /** Keeps a delivered result under a one-time code. */
  async putResult(code: string, result: Record<string, unknown>): Promise<void> {
    await guard(() => this.redis.set(this.keys.result(code), JSON.stringify(result), 'EX', this.expireSeconds))
  }

  /** Redeems a one-time result code: the first caller gets the result, later ones nothing. */
  async takeResult(code: string): Promise<Record<string, unknown> | undefined> {
    const raw = await guard(() => this.redis.getdel(this.keys.result(code)))
    return raw ? (JSON.parse(raw) as Record<string, unknown>) : undefined
  }

  /** Round trip to the store, for readiness checks. */
  async ping(): Promise<void> {
    await guard(() => this.redis.ping())
  }
}

/** Turns a store failure (Redis down, command timeout) into STORE_UNAVAILABLE. */
async function guard<T>(op: () => Promise<T>): Promise<T> {
  try {
    return await op()
  } catch (err) {
    if (err instanceof BrokerError) throw err
    throw new BrokerError('STORE_UNAVAILABLE', 'The flow store is not answering; try again shortly.', {})
  }
}
