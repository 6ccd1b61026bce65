import type { FlowErrorCode, FlowRecord } from '../../../flows/contract.js'

export const PROGRESS = [
  'stored',
  'started',
  'awaiting_callback',
  'awaiting_user',
  'exchanging',
  'completed',
  'failed',
] as const
export type Progress = (typeof PROGRESS)[number]

/**
 * The broker's registry codes a flow can fail with: a flow plugin's (FlowError), and the runner's own
 * (an exchange a stopped process left unfinished, a result too long for a URL).
 */
export type FlowFailureCode = FlowErrorCode | 'EXCHANGE_INTERRUPTED' | 'URL_TOO_LONG' | 'RESULT_NOT_KEPT'

/** Why a flow failed: the broker's registry code, the OAuth `error` its app was sent, and the description. */
export interface FlowFailure {
  code: FlowFailureCode
  error: string
  description: string
}

/** One stored flow, as the broker works with it. */
export interface FlowEntry {
  hash: string
  plugin: string
  record: FlowRecord
  progress: Progress
  createdAt: number
  expiresAt: number
  /** What the flow's steps saved (PKCE verifier, cookie nonce, request token secret …). */
  data: Record<string, unknown>
  error?: FlowFailure
  /**
   * While `exchanging`: until when (ms since the epoch) the request that runs the token exchange holds
   * the flow. Past it, that request is taken for dead (its process stopped) and the next request for
   * the flow fails it as EXCHANGE_INTERRUPTED.
   */
  leaseUntil?: number
  /** Which of the store's secrets sealed it (0: the first); set by the store when it reads the flow. */
  generation?: number
}

/** What the codec reads from a stored flow. */
export interface DecodedFlow {
  entry: FlowEntry
  /** A reusable flow (a signing helper) is never claimed by /start. */
  reusable: boolean
  /** The first step's redirect, when it ran at /store. */
  redirect?: string
}

// The one layout of a flow's Redis value (a string, so /store writes it with one SET … PX … NX):
//
//   <version "2"><progress code><reusable 0|1><prepared 0|1><sealed body>
//
// The four header characters are all that Redis's scripts read: the progress for compare-and-set,
// the two flags for /start's claim. Everything else (record, data, error, times, prepared redirect)
// is one JSON document sealed by the store (AES-256-GCM, see seal.ts) and never read in Lua. A
// transition rewrites the whole value, header and body, in one script. Version 1 (no version
// character: the progress code came first) was kept in clear under the raw hash; this version
// never looks such keys up, and any other first character reads as gone.
const VERSION = '2'
const CODES: Record<Progress, string> = {
  stored: 's',
  started: 't',
  awaiting_callback: 'a',
  // A device flow (RFC 8628) from /store until its user decides on another device.
  awaiting_user: 'u',
  exchanging: 'x',
  completed: 'c',
  failed: 'f',
}
const BY_CODE = Object.fromEntries(Object.entries(CODES).map(([p, c]) => [c, p])) as Record<string, Progress>
const HEADER = 4

/**
 * Compare-and-set on the progress: the one atomic step that makes hashes and callbacks single use
 * across workers and instances. ARGV: the expected code, the new code, the new sealed body, and '1'
 * to be answered the value it replaced (for an undo, UNMOVE_SCRIPT) instead of 'OK'; the reusable
 * flag stays, the prepared flag clears (only a `stored` flow's claim reads it), the TTL stays.
 * Returns 'OK' (or the value it replaced), the current progress code, or -1 (gone, or another format).
 */
export const CAS_SCRIPT = `local v = redis.call('GET', KEYS[1])
if type(v) ~= 'string' or string.sub(v, 1, 1) ~= '${VERSION}' then return -1 end
local p = string.sub(v, 2, 2)
if p ~= ARGV[1] then return p end
local next = '${VERSION}' .. ARGV[2] .. string.sub(v, 3, 3) .. '0' .. ARGV[3]
local ttl = redis.call('PTTL', KEYS[1])
if ttl > 0 then redis.call('SET', KEYS[1], next, 'PX', ttl) else redis.call('SET', KEYS[1], next) end
if ARGV[4] == '1' then return v end
return 'OK'`

/** The value CAS_SCRIPT writes over `was` (a flow's value) with encodeTransition's new code and body. */
export const movedValue = (was: string, toCode: string, body: string): string => `${VERSION}${toCode}${was[2]}0${body}`

/** Whether CAS_SCRIPT's answer is the value it replaced (asked for with its fourth argument). */
export const isFlowValue = (res: unknown): res is string =>
  typeof res === 'string' && res[0] === VERSION && res.length > HEADER

/** A move undone (/callback answered 503 for its move to `exchanging`, the provider not called): a flow
 * still holding exactly the value the move wrote (ARGV[1]: nobody moved it since, not even its lease
 * renewed) goes back to the value the move found (ARGV[2]), keeping its time to live. Returns 1 when
 * undone, 0 when not. */
export const UNMOVE_SCRIPT = `if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
local ttl = redis.call('PTTL', KEYS[1])
if ttl > 0 then redis.call('SET', KEYS[1], ARGV[2], 'PX', ttl) else redis.call('SET', KEYS[1], ARGV[2]) end
return 1`

/** /start's read and claim in one step: a one-shot flow still `stored` moves on (to `awaiting_callback`
 * when its first step ran at /store, else `started`) and from then lives ARGV[1] ms (store.callbackWait:
 * the user's time at the provider's login, not the unstarted record's store.expire). Returns the value
 * as it was, or false (gone). (Type tests: a missing key is false in Redis's Lua and may be a null
 * userdata in the embedded store's.) */
export const CLAIM_SCRIPT = `local v = redis.call('GET', KEYS[1])
if type(v) ~= 'string' then return false end
local h = string.sub(v, 1, 4)
if h == '${VERSION}${CODES.stored}00' then redis.call('SETRANGE', KEYS[1], 1, '${CODES.started}') end
if h == '${VERSION}${CODES.stored}01' then redis.call('SETRANGE', KEYS[1], 1, '${CODES.awaiting_callback}') end
if h == '${VERSION}${CODES.stored}00' or h == '${VERSION}${CODES.stored}01' then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return v`

/** Whether CLAIM_SCRIPT moves a flow of value `v` on (a one-shot flow still `stored`). */
export const claimable = (v: string): boolean => v.startsWith(`${VERSION}${CODES.stored}0`)

/** A claim undone (/start answered 503 after it): a flow still as the claim or its first step left it
 * (`started` or `awaiting_callback`: nobody else moves it before the browser is sent on) goes back to the
 * value the claim found (ARGV[1]) with the time that had left (ARGV[2] ms). A later claim (a retry's: the
 * same bytes) is told by its longer time to live (more than ARGV[3] ms) and stays, as does a flow that
 * ended. Returns 1 when undone, 0 when not. */
export const UNCLAIM_SCRIPT = `local v = redis.call('GET', KEYS[1])
if type(v) ~= 'string' or string.sub(v, 1, 1) ~= '${VERSION}' then return 0 end
local p = string.sub(v, 2, 2)
if p ~= '${CODES.started}' and p ~= '${CODES.awaiting_callback}' then return 0 end
if redis.call('PTTL', KEYS[1]) > tonumber(ARGV[3]) then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1`

/** The progress a script answered with (a header code), or undefined for anything else. */
export const progressOfCode = (code: unknown): Progress | undefined =>
  typeof code === 'string' ? BY_CODE[code] : undefined

/** The JSON document sealed in a flow's body. */
interface Body {
  plugin: string
  record: FlowRecord
  createdAt: number
  expiresAt: number
  data: Record<string, unknown>
  error?: FlowEntry['error']
  leaseUntil?: number
  redirect?: string
}

// Built field by field: spreading conditional object literals cost a few allocations per write.
const bodyJson = (entry: FlowEntry, redirect?: string): string => {
  const body: Body = {
    plugin: entry.plugin,
    record: entry.record,
    createdAt: entry.createdAt,
    expiresAt: entry.expiresAt,
    data: entry.data,
  }
  if (entry.error) body.error = entry.error
  if (entry.progress === 'exchanging' && entry.leaseUntil !== undefined) body.leaseUntil = entry.leaseUntil
  if (redirect) body.redirect = redirect
  return JSON.stringify(body)
}

/** A new flow's value, with `seal` turning its body's JSON into sealed text. */
export function encodeFlow(flow: DecodedFlow, seal: (json: string) => string): string {
  const { entry, reusable, redirect } = flow
  return `${VERSION}${CODES[entry.progress]}${reusable ? '1' : '0'}${redirect ? '1' : '0'}${seal(bodyJson(entry, redirect))}`
}

/** CAS_SCRIPT's arguments for moving a flow from `from` to `next` (its progress, data and error). */
export function encodeTransition(
  from: Progress,
  next: FlowEntry,
  seal: (json: string) => string,
): [string, string, string] {
  return [CODES[from], CODES[next.progress], seal(bodyJson(next))]
}

/** A flow from its value, with `open` giving back its body's JSON; undefined when the value is of
 * another format or does not open (another key, tampered). */
export function decodeFlow(
  hash: string,
  value: string,
  open: (sealed: string) => string | undefined,
): DecodedFlow | undefined {
  if (value[0] !== VERSION || value.length <= HEADER) return undefined
  const progress = BY_CODE[value[1]!]
  const json = progress && open(value.slice(HEADER))
  if (!json) return undefined
  const body = JSON.parse(json) as Body
  const entry: FlowEntry = {
    hash,
    plugin: body.plugin,
    record: body.record,
    progress,
    createdAt: body.createdAt,
    expiresAt: body.expiresAt,
    data: body.data,
    ...(body.error ? { error: body.error } : {}),
    ...(progress === 'exchanging' && typeof body.leaseUntil === 'number' ? { leaseUntil: body.leaseUntil } : {}),
  }
  return { entry, reusable: value[2] === '1', ...(body.redirect ? { redirect: body.redirect } : {}) }
}

// A result waiting for /result, or the flow a request token belongs to: `<version "2"><sealed text>`.

/** The value of a small sealed key (result, callback correlation). */
export const encodeSealed = (sealed: string): string => `${VERSION}${sealed}`

/** The sealed text of a small sealed key, or undefined when it is of another format. */
export const decodeSealed = (value: unknown): string | undefined =>
  typeof value === 'string' && value[0] === VERSION ? value.slice(1) : undefined
