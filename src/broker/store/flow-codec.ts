import type { FlowErrorCode, FlowRecord } from '../../../flows/contract.js'
import type { Sealing } from './seal.js'

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
  /** The key the store found the flow under, when it read it: see SEALED_UNDER. */
  [SEALED_UNDER]?: Sealing
}

/**
 * The key (name and AES key) a flow was found under, on the entry the store read, for the writes that
 * follow the read: a /callback moves its flow to `exchanging`, then to `completed`, and each would derive
 * the key again (an HMAC-SHA512 and a Buffer). A symbol, so no JSON or log line of an entry holds it; on
 * the entry itself (a transition's spread carries it to the next), because a map of recent keys by hash
 * or a WeakMap by entry kept each one past the young generation's collections, promoted into the old
 * one (docs/decisions/0006). Only writes take it; reads derive afresh.
 */
export const SEALED_UNDER: unique symbol = Symbol('sealed under')

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
//   <version "3"><progress code><reusable 0|1><prepared 0|1><lease: 13 digits><sealed body>
//
// The header is all that Redis's scripts read: the progress for compare-and-set, the two flags for
// /start's claim. The lease (ms since the epoch; zeros when none) is the time until which the request
// running an `exchanging` flow's token exchange holds it: like the progress, it says where the flow
// stands, not what it is, so it is kept in clear, and the move to `exchanging` and each renewal of the
// lease rewrite the header alone. Everything else (record, data, error, times, prepared redirect) is
// one JSON document sealed by the store (AES-256-GCM, see seal.ts) and never read in Lua; a transition
// that changes it rewrites the whole value, header and body, in one script. Earlier versions (2: the
// lease inside the sealed body; 1: the progress code first, kept in clear under the raw hash) are
// never looked up: any other first character reads as gone.
const VERSION = '3'
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
const LEASE_DIGITS = 13
const NO_LEASE = '0'.repeat(LEASE_DIGITS)
const HEADER = 4 + LEASE_DIGITS

/** The header's lease field: a time in ms since the epoch as 13 digits (until the year 2286), or zeros. */
const leaseField = (until: number | undefined): string =>
  until === undefined || !(until > 0)
    ? NO_LEASE
    : String(Math.min(Math.floor(until), 9_999_999_999_999)).padStart(LEASE_DIGITS, '0')

/**
 * Compare-and-set on the progress: the one atomic step that makes hashes and callbacks single use
 * across workers and instances. ARGV: the expected code, the new code, the new sealed body ('' keeps
 * the body as it is: a move that changes only where the flow stands), '1' to be answered the header
 * it replaced (for an undo, UNMOVE_SCRIPT) instead of 'OK', and the new lease field; the reusable
 * flag stays, the prepared flag clears (only a `stored` flow's claim reads it), the TTL stays.
 * Returns 'OK' (or the header it replaced), the current progress code, or -1 (gone, or another format).
 */
export const CAS_SCRIPT = `local v = redis.call('GET', KEYS[1])
if type(v) ~= 'string' or string.sub(v, 1, 1) ~= '${VERSION}' or string.len(v) <= ${HEADER} then return -1 end
local p = string.sub(v, 2, 2)
if p ~= ARGV[1] then return p end
local body = ARGV[3]
if body == '' then body = string.sub(v, ${HEADER + 1}) end
local next = '${VERSION}' .. ARGV[2] .. string.sub(v, 3, 3) .. '0' .. ARGV[5] .. body
local ttl = redis.call('PTTL', KEYS[1])
if ttl > 0 then redis.call('SET', KEYS[1], next, 'PX', ttl) else redis.call('SET', KEYS[1], next) end
if ARGV[4] == '1' then return string.sub(v, 1, ${HEADER}) end
return 'OK'`

/** The header CAS_SCRIPT writes over a flow whose header was `was`, with encodeTransition's new code and lease. */
export const movedHeader = (was: string, toCode: string, lease: string): string =>
  `${VERSION}${toCode}${was[2]}0${lease}`

/** Whether CAS_SCRIPT's answer is the header it replaced (asked for with its fourth argument). */
export const isFlowHeader = (res: unknown): res is string =>
  typeof res === 'string' && res.length === HEADER && res[0] === VERSION

/** A move undone (/callback answered 503 for its move to `exchanging`, the provider not called): a flow
 * whose header is still exactly the one the move wrote (ARGV[1]: nobody moved it since, not even its
 * lease renewed; the move kept the body) gets back the header the move found (ARGV[2]), keeping its
 * body and its time to live. Returns 1 when undone, 0 when not. */
export const UNMOVE_SCRIPT = `local v = redis.call('GET', KEYS[1])
if type(v) ~= 'string' or string.sub(v, 1, ${HEADER}) ~= ARGV[1] then return 0 end
local was = ARGV[2] .. string.sub(v, ${HEADER + 1})
local ttl = redis.call('PTTL', KEYS[1])
if ttl > 0 then redis.call('SET', KEYS[1], was, 'PX', ttl) else redis.call('SET', KEYS[1], was) end
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
  if (redirect) body.redirect = redirect
  return JSON.stringify(body)
}

/** A new flow's value, with `seal` turning its body's JSON into sealed text. */
export function encodeFlow(flow: DecodedFlow, seal: (json: string) => string): string {
  const { entry, reusable, redirect } = flow
  const lease = entry.progress === 'exchanging' ? leaseField(entry.leaseUntil) : NO_LEASE
  return `${VERSION}${CODES[entry.progress]}${reusable ? '1' : '0'}${redirect ? '1' : '0'}${lease}${seal(bodyJson(entry, redirect))}`
}

/**
 * CAS_SCRIPT's arguments for moving a flow from `from` to `next` (its progress, lease, data and
 * error): the expected code, the new code, the new sealed body (or '' with `keepBody`, when the move
 * changes neither data nor error: the stored body is kept, not sealed again) and the new lease field.
 */
export function encodeTransition(
  from: Progress,
  next: FlowEntry,
  seal: (json: string) => string,
  keepBody = false,
): { fromCode: string; toCode: string; body: string; lease: string } {
  return {
    fromCode: CODES[from],
    toCode: CODES[next.progress],
    body: keepBody ? '' : seal(bodyJson(next)),
    lease: next.progress === 'exchanging' ? leaseField(next.leaseUntil) : NO_LEASE,
  }
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
  }
  if (progress === 'exchanging') {
    const lease = Number(value.slice(4, HEADER))
    if (lease > 0) entry.leaseUntil = lease
  }
  // A body kept through a move still holds the redirect prepared at /store; the flag says whether it stands.
  return {
    entry,
    reusable: value[2] === '1',
    ...(body.redirect && value[3] === '1' ? { redirect: body.redirect } : {}),
  }
}

// A result waiting for /result, or the flow a request token belongs to: `<version "2"><sealed text>`
// (their layout did not change with the flow's version 3).
const SMALL_VERSION = '2'

/** The value of a small sealed key (result, callback correlation). */
export const encodeSealed = (sealed: string): string => `${SMALL_VERSION}${sealed}`

/** The sealed text of a small sealed key, or undefined when it is of another format. */
export const decodeSealed = (value: unknown): string | undefined =>
  typeof value === 'string' && value[0] === SMALL_VERSION ? value.slice(1) : undefined
