import { ClearingMap } from '../../util/clearing-map.js'

/** What the broker reads of a URL: its parts, as WHATWG `URL` parses them. */
export interface UrlParts {
  readonly href: string
  readonly protocol: string
  readonly host: string
  readonly hostname: string
  readonly origin: string
  readonly pathname: string
  /** Whether `href` has neither a query (not even a bare `?`) nor a fragment: parameters can be appended. */
  readonly bare: boolean
}

// Every /store parses the record's provider URLs and callback, and every OAuth 2 start builds an
// authorize URL: `new URL` was a visible share of /store's CPU profile. An app sends the same few
// URLs again and again, so their parts are kept, keyed by the exact text; the map starts over when
// full, so hostile input can grow it by no more than MAX_KEPT entries.
const MAX_KEPT = 512
const MAX_LENGTH = 2048
const kept = new ClearingMap<string, UrlParts | null>(MAX_KEPT)

/** The parts of an absolute URL, or undefined when `text` does not parse as one. */
export function urlParts(text: string): UrlParts | undefined {
  const hit = kept.get(text)
  if (hit !== undefined) return hit ?? undefined
  let parts: UrlParts | null
  try {
    const u = new URL(text)
    parts = Object.freeze({
      href: u.href,
      protocol: u.protocol,
      host: u.host,
      hostname: u.hostname,
      origin: u.origin,
      pathname: u.pathname,
      bare: !u.href.includes('?') && !u.href.includes('#'),
    })
  } catch {
    parts = null
  }
  if (text.length <= MAX_LENGTH) {
    kept.set(text, parts)
  }
  return parts ?? undefined
}

/** Whether `text` is an absolute http(s) URL with a host. */
export function isHttpUrl(text: string): boolean {
  const u = urlParts(text)
  return !!u && (u.protocol === 'http:' || u.protocol === 'https:') && !!u.hostname
}

type Params = Readonly<Record<string, string>>

/** `base?fixed` serialized, with the fixed parameters it was made from. */
interface Prefix {
  names: string[]
  values: string[]
  url: string
}

// Per base URL (its cached `href`, so the lookup hashes nothing new), the last few sets of fixed
// parameters seen with it: one authorize URL may serve several apps (client ids, scopes).
// Bounded like the URL parts.
const VARIANTS = 8
const prefixes = new ClearingMap<string, Prefix[]>(MAX_KEPT)

/** The kept prefix whose fixed parameters are exactly `fixed`, in the same order. */
function findPrefix(list: Prefix[], fixed: Params): Prefix | undefined {
  outer: for (const p of list) {
    let i = 0
    for (const k in fixed) {
      if (p.names[i] !== k || p.values[i] !== fixed[k]) continue outer
      i++
    }
    if (i === p.names.length) return p
  }
  return undefined
}

/**
 * `base` with `fixed` and then `varying` set in its query, as `url.searchParams.set` would leave
 * it. The URL with its fixed parameters (an app's client_id, redirect_uri, scope …) is serialized
 * once and kept; each call encodes only its varying ones (state, PKCE challenge): building an
 * authorize URL was a sixth of /store's CPU.
 */
export function setQuery(base: string, fixed: Params, varying: Params = {}): string {
  const parts = urlParts(base)
  if (!parts?.bare) return slowSetQuery(base, fixed, varying)
  for (const k in varying) if (k in fixed) return slowSetQuery(base, fixed, varying)
  let list = prefixes.get(parts.href)
  let prefix = list && findPrefix(list, fixed)
  if (!prefix) {
    prefix = {
      names: Object.keys(fixed),
      values: Object.values(fixed),
      url: `${parts.href}?${new URLSearchParams(fixed)}`,
    }
    if (prefix.url.length <= MAX_LENGTH) {
      if (!list) {
        prefixes.set(parts.href, (list = []))
      }
      if (list.length >= VARIANTS) list.shift()
      list.push(prefix)
    }
  }
  let url = prefix.url
  let sep = url.endsWith('?') ? '' : '&'
  for (const k in varying) {
    url += `${sep}${formEncode(k)}=${formEncode(varying[k]!)}`
    sep = '&'
  }
  return sep ? url : url.slice(0, -1)
}

function slowSetQuery(base: string, fixed: Params, varying: Params): string {
  const url = new URL(base)
  for (const params of [fixed, varying]) for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v)
  return url.toString()
}

// What application/x-www-form-urlencoded leaves as it is (WHATWG URL, "urlencoded serializer").
const FORM_SAFE = /^[A-Za-z0-9*._-]*$/

/** One name or value encoded as URLSearchParams encodes it (ids and PKCE challenges pass as they are). */
const formEncode = (s: string): string => (FORM_SAFE.test(s) ? s : new URLSearchParams([['', s]]).toString().slice(1))

/**
 * Extra authorize parameters from the record: an object, or a query string. Here rather than in oauth2.ts:
 * /store's provider expansion needs it, and oauth2.ts brings jose into a worker that may never sign.
 */
export function extraParams(value: unknown): Record<string, string> {
  if (!value) return {}
  if (typeof value === 'string') return Object.fromEntries(new URLSearchParams(value))
  if (typeof value === 'object')
    return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, String(v)]))
  return {}
}
