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
let kept = new Map<string, UrlParts | null>()

/** The parts of an absolute URL, or undefined when `text` does not parse as one. */
export function urlParts(text: string): UrlParts | undefined {
  const hit = kept.get(text)
  if (hit !== undefined) return hit ?? undefined
  let parts: UrlParts | null = null
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
    if (kept.size >= MAX_KEPT) kept = new Map()
    kept.set(text, parts)
  }
  return parts ?? undefined
}

/** Whether `text` is an absolute http(s) URL with a host. */
export function isHttpUrl(text: string): boolean {
  const u = urlParts(text)
  return !!u && (u.protocol === 'http:' || u.protocol === 'https:') && !!u.hostname
}

/**
 * `base` with `params` set in its query, as `url.searchParams.set` would leave it: one
 * serialization when `base` has no query or fragment yet (the common case), instead of one per
 * parameter.
 */
export function setQuery(base: string, params: Readonly<Record<string, string>>): string {
  const parts = urlParts(base)
  if (parts?.bare) return `${parts.href}?${new URLSearchParams(params)}`
  const url = new URL(base)
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v)
  return url.toString()
}
