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

// A flow is a Redis hash: `entry` (what never changes: record, plugin, times; JSON), `progress`,
// `data` (what steps saved; JSON), `error` (JSON), `reusable` ('1' for signing flows) and
// `redirect` (the first step's redirect, when it ran at /store). Steps rewrite only the small
// fields, never the record.

// Compare-and-set on the flow's progress: the one atomic step that makes hashes and callbacks
// single use across workers and instances. Returns 'OK', the current progress, or -1 (gone).
const CAS = `local p = redis.call('HGET', KEYS[1], 'progress')
if not p then return -1 end
if p ~= ARGV[1] then return p end
redis.call('HSET', KEYS[1], 'progress', ARGV[2], 'data', ARGV[3])
if ARGV[4] ~= '' then redis.call('HSET', KEYS[1], 'error', ARGV[4]) end
return 'OK'`

// Reads a flow and, when it is a one-shot flow still `stored`, moves it on in the same step:
// /start's read and claim in one round trip. A flow whose first step ran at /store goes straight
// to `awaiting_callback`, others to `started`. Returns false (gone) or
// {progress before, entry, data, error, reusable, redirect}.
// (A missing field is false in Redis's Lua and a null userdata in the embedded store's: test types.)
const CLAIM = `local f = redis.call('HMGET', KEYS[1], 'progress', 'entry', 'data', 'error', 'reusable', 'redirect')
if type(f[1]) ~= 'string' then return false end
if f[1] == 'stored' and f[5] ~= '1' then
  redis.call('HSET', KEYS[1], 'progress', (type(f[6]) == 'string' and f[6] ~= '') and 'awaiting_callback' or 'started')
end
return f`

const CREATE = `if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'progress', ARGV[1], 'entry', ARGV[2], 'reusable', ARGV[4], 'data', ARGV[5], 'redirect', ARGV[6])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1`

type Field = string | null | false
type ScriptedRedis = Redis & {
  brokerCas(key: string, from: string, to: string, data: string, error: string): Promise<string | number>
  brokerClaim(key: string): Promise<Field[] | null>
  brokerCreate(key: string, progress: string, entry: string, ttlMs: number, reusable: string, data: string, redirect: string): Promise<number>
}

/** What /start's claim found: the flow as it was, whether it is reusable (never claimed), and its prepared redirect. */
export interface Claimed {
  entry: FlowEntry
  reusable: boolean
  /** The first step's redirect when it ran at /store: the claim moved the flow to awaiting_callback. */
  redirect?: string
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
      redis.defineCommand('brokerClaim', { numberOfKeys: 1, lua: CLAIM })
      redis.defineCommand('brokerCreate', { numberOfKeys: 1, lua: CREATE })
    }
  }

  /** The Redis client (or the embedded store's), for plugins that keep their own keys: rate limits. */
  get client(): Redis {
    return this.redis
  }

  /**
   * Stores a new flow for its lifetime; the hash must be new. A reusable flow is never claimed by
   * /start; `redirect` is the first step's, when it ran at /store.
   */
  async create(entry: FlowEntry, opts: { reusable?: boolean; redirect?: string } = {}): Promise<void> {
    const ttlMs = entry.expiresAt - entry.createdAt
    const created = await guard(() =>
      this.redis.brokerCreate(this.keys.flow(entry.hash), entry.progress, staticJson(entry), ttlMs, opts.reusable ? '1' : '0', JSON.stringify(entry.data), opts.redirect ?? ''),
    )
    if (created !== 1) throw new BrokerError('INTERNAL', 'A flow with this hash exists already.')
  }

  /** The flow under `hash`, or undefined when unknown or expired. */
  async get(hash: string): Promise<FlowEntry | undefined> {
    const fields = await guard(() => this.redis.hmget(this.keys.flow(hash), 'progress', 'entry', 'data', 'error'))
    return fields[0] ? toEntry(fields) : undefined
  }

  /**
   * The flow under `hash` as it was, moving a one-shot flow from `stored` to `started` atomically
   * (so a start URL works once); undefined when unknown or expired.
   */
  async claim(hash: string): Promise<Claimed | undefined> {
    const fields = await guard(() => this.redis.brokerClaim(this.keys.flow(hash)))
    if (!fields?.[0]) return undefined
    return { entry: toEntry(fields), reusable: fields[4] === '1', ...(fields[5] ? { redirect: fields[5] } : {}) }
  }

  /**
   * Moves a flow from `from` to the entry's progress atomically, with its data and error. Returns
   * the progress found instead when another request moved it first, or 'gone' when it expired.
   */
  async advance(from: Progress, next: FlowEntry): Promise<'ok' | 'gone' | Progress> {
    const error = next.error ? JSON.stringify(next.error) : ''
    const res = await guard(() => this.redis.brokerCas(this.keys.flow(next.hash), from, next.progress, JSON.stringify(next.data), error))
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

/** The part of an entry that never changes after /store, as kept in the `entry` field. */
const staticJson = ({ hash, plugin, record, createdAt, expiresAt }: FlowEntry): string => JSON.stringify({ hash, plugin, record, createdAt, expiresAt })

/** An entry from its fields: progress, entry, data, error. */
function toEntry(fields: readonly Field[]): FlowEntry {
  const entry = JSON.parse(fields[1] as string) as FlowEntry
  entry.progress = fields[0] as Progress
  entry.data = fields[2] ? (JSON.parse(fields[2]) as Record<string, unknown>) : {}
  if (fields[3]) entry.error = JSON.parse(fields[3]) as FlowEntry['error']
  return entry
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
