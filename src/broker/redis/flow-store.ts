import { Socket } from 'node:net'
import type { Redis } from 'ioredis'
import type { FlowRecord } from '../../../flows/contract.js'
import { BrokerError } from '../../errors.js'
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

// A flow is one Redis string, so that /store writes it with one plain SET … PX … NX (a script or a
// hash with its own PEXPIRE cost a third more CPU, client and server, in the bench):
//
//   <progress code><reusable 0|1><entry JSON>\n<redirect>\n<data JSON>\n<error JSON>
//
// `entry` never changes after /store; `redirect` is the first step's, when it ran at /store. JSON
// and URLs never hold a raw newline, so the parts split on it. The first byte is the progress:
// /start's claim rewrites that byte alone (SETRANGE), later steps rewrite data and error.
const CODES: Record<Progress, string> = { stored: 's', started: 't', awaiting_callback: 'a', exchanging: 'x', completed: 'c', failed: 'f' }
const BY_CODE = Object.fromEntries(Object.entries(CODES).map(([p, c]) => [c, p])) as Record<string, Progress>

// Compare-and-set on the flow's progress: the one atomic step that makes hashes and callbacks
// single use across workers and instances. Returns 'OK', the current progress code, or -1 (gone).
// (Type tests: a missing key is false in Redis's Lua and may be a null userdata in the embedded store's.)
const CAS = `local v = redis.call('GET', KEYS[1])
if type(v) ~= 'string' then return -1 end
local p = string.sub(v, 1, 1)
if p ~= ARGV[1] then return p end
local a = string.find(v, '\\n', 3, true)
local b = string.find(v, '\\n', a + 1, true)
local ttl = redis.call('PTTL', KEYS[1])
local next = ARGV[2] .. string.sub(v, 2, b) .. ARGV[3] .. '\\n' .. ARGV[4]
if ttl > 0 then redis.call('SET', KEYS[1], next, 'PX', ttl) else redis.call('SET', KEYS[1], next) end
return 'OK'`

// Reads a flow and, when it is a one-shot flow still `stored`, moves it on in the same step:
// /start's read and claim in one round trip. A flow whose first step ran at /store goes straight
// to `awaiting_callback`, others to `started`. Returns the flow as it was, or false (gone).
const CLAIM = `local v = redis.call('GET', KEYS[1])
if type(v) ~= 'string' then return false end
if string.sub(v, 1, 2) == 's0' then
  local a = string.find(v, '\\n', 3, true)
  redis.call('SETRANGE', KEYS[1], 0, string.sub(v, a + 1, a + 1) == '\\n' and 't' or 'a')
end
return v`

type ScriptedRedis = Redis & {
  brokerCas(key: string, from: string, to: string, data: string, error: string): Promise<string | number>
  brokerClaim(key: string): Promise<string | null>
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
    }
  }

  /** One store operation: its write joins the others of this event-loop turn; a failure is STORE_UNAVAILABLE. */
  private send<T>(op: () => Promise<T>): Promise<T> {
    coalesceTurn(this.redis)
    return guard(op)
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
    const redirect = opts.redirect ?? ''
    if (!keepableRedirect(redirect)) throw new BrokerError('INTERNAL', 'A redirect URL must not hold a line break.')
    const value = `${CODES[entry.progress]}${opts.reusable ? '1' : '0'}${staticJson(entry)}\n${redirect}\n${JSON.stringify(entry.data)}\n`
    const created = await this.send(() => this.redis.set(this.keys.flow(entry.hash), value, 'PX', entry.expiresAt - entry.createdAt, 'NX'))
    if (created !== 'OK') throw new BrokerError('INTERNAL', 'A flow with this hash exists already.')
  }

  /** The flow under `hash`, or undefined when unknown or expired. */
  async get(hash: string): Promise<FlowEntry | undefined> {
    if (!knowable(hash)) return undefined
    const value = await this.send(() => this.redis.get(this.keys.flow(hash)).catch(otherFormat(null)))
    return typeof value === 'string' ? parseFlow(value).entry : undefined
  }

  /**
   * The flow under `hash` as it was, moving a one-shot flow from `stored` to `started` atomically
   * (so a start URL works once); undefined when unknown or expired.
   */
  async claim(hash: string): Promise<Claimed | undefined> {
    if (!knowable(hash)) return undefined
    const value = await this.send(() => this.redis.brokerClaim(this.keys.flow(hash)).catch(otherFormat(null)))
    return typeof value === 'string' ? parseFlow(value) : undefined
  }

  /**
   * Moves a flow from `from` to the entry's progress atomically, with its data and error. Returns
   * the progress found instead when another request moved it first, or 'gone' when it expired.
   */
  async advance(from: Progress, next: FlowEntry): Promise<'ok' | 'gone' | Progress> {
    const error = next.error ? JSON.stringify(next.error) : ''
    const res = await this.send(() => this.redis.brokerCas(this.keys.flow(next.hash), CODES[from], CODES[next.progress], JSON.stringify(next.data), error).catch(otherFormat(-1)))
    if (res === 'OK') return 'ok'
    if (res === -1) return 'gone'
    return BY_CODE[res as string] ?? 'failed'
  }

  /** Remembers which flow a callback id (state, request token) belongs to, for the flow's lifetime. */
  async correlate(id: string, hash: string, expiresAt: number): Promise<void> {
    const ms = Math.max(1, expiresAt - Date.now())
    await this.send(() => this.redis.set(this.keys.callback(id), hash, 'PX', ms))
  }

  /** The flow hash a callback id belongs to. */
  async correlated(id: string): Promise<string | undefined> {
    if (!knowable(id)) return undefined
    return (await this.send(() => this.redis.get(this.keys.callback(id)))) ?? undefined
  }

  /** Keeps a delivered result under a one-time code. */
  async putResult(code: string, result: Record<string, unknown>): Promise<void> {
    await this.send(() => this.redis.set(this.keys.result(code), JSON.stringify(result), 'EX', this.expireSeconds))
  }

  /** Redeems a one-time result code: the first caller gets the result, later ones nothing. */
  async takeResult(code: string): Promise<Record<string, unknown> | undefined> {
    if (!knowable(code)) return undefined
    const raw = await this.send(() => this.redis.getdel(this.keys.result(code)))
    return raw ? (JSON.parse(raw) as Record<string, unknown>) : undefined
  }

  /** Round trip to the store, for readiness checks. */
  async ping(): Promise<void> {
    await this.send(() => this.redis.ping())
  }
}

// Hashes, codes and callback ids the broker makes are 32 characters; a client may send anything.
// Longer than this names nothing, so it is answered as unknown without a store round trip.
const MAX_ID = 128
const knowable = (id: string): boolean => id.length <= MAX_ID

/** Whether a redirect can be kept with a flow: the stored format splits on line breaks. */
export const keepableRedirect = (url: string): boolean => !url.includes('\n') && !url.includes('\r')

/** The part of an entry that never changes after /store, as kept in the `entry` part. */
const staticJson = ({ hash, plugin, record, createdAt, expiresAt }: FlowEntry): string => JSON.stringify({ hash, plugin, record, createdAt, expiresAt })

/** A flow from its stored string (see the format above). */
function parseFlow(value: string): Claimed {
  const a = value.indexOf('\n', 2)
  const b = value.indexOf('\n', a + 1)
  const c = value.indexOf('\n', b + 1)
  const entry = JSON.parse(value.slice(2, a)) as FlowEntry
  entry.progress = BY_CODE[value[0]!]!
  const data = value.slice(b + 1, c)
  entry.data = data ? (JSON.parse(data) as Record<string, unknown>) : {}
  if (c + 1 < value.length) entry.error = JSON.parse(value.slice(c + 1)) as FlowEntry['error']
  const redirect = value.slice(a + 1, b)
  return { entry, reusable: value[1] === '1', ...(redirect ? { redirect } : {}) }
}

/**
 * A key in another format (a flow kept by an earlier version, as a Redis hash, during a rolling
 * upgrade) is a flow this version cannot run: it answers as gone, not as a store failure.
 */
const otherFormat =
  <T>(gone: T) =>
  (err: unknown): T => {
    if (err instanceof Error && err.message.includes('WRONGTYPE')) return gone
    throw err
  }

/**
 * Holds the Redis socket's writes until this event-loop turn ends, then sends them as one write.
 * Under load many requests reach the store in one turn, and a write (a syscall) per command was the
 * largest cost in the bench's CPU profile. ioredis's auto-pipelining batches too, but it keeps one
 * batch in flight at a time: the requests queued behind it lived long enough to be promoted out of
 * the young generation (scavenges five times longer, a full GC every few seconds, and 27% more
 * instructions per /store under callgrind, most of them in the GC's threads). A client without a
 * socket of its own (Cluster, the embedded store) is left as it is.
 */
export function coalesceTurn(client: Redis): void {
  const socket = (client as { stream?: unknown }).stream
  if (!(socket instanceof Socket) || socket.writableCorked) return
  socket.cork()
  setImmediate(uncork, socket)
}
const uncork = (socket: Socket) => socket.uncork()

/** Turns a store failure (Redis down, command timeout) into STORE_UNAVAILABLE. */
async function guard<T>(op: () => Promise<T>): Promise<T> {
  try {
    return await op()
  } catch (err) {
    if (err instanceof BrokerError) throw err
    throw new BrokerError('STORE_UNAVAILABLE', 'The flow store is not answering; try again shortly.', {})
  }
}
