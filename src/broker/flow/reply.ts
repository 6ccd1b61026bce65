/** A transport-neutral answer: the server turns it into an HTTP response. */
export interface Reply {
  status: number
  headers?: Record<string, string>
  /** JSON body. */
  json?: unknown
  /** HTML body (form_post delivery). */
  html?: string
  /** A cookie to set (its value is already signed). */
  cookie?: { name: string; value: string; maxAge: number }
}

/** A 302 to `location`. */
export const redirect = (location: string, extra: Partial<Reply> = {}): Reply => ({
  status: 302,
  ...extra,
  headers: { location, ...extra.headers },
})

/** A URL with `params` added to its query, keeping what it had. */
export function withQuery(base: string, params: Record<string, unknown>): string {
  const url = new URL(base)
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null) url.searchParams.set(k, String(v))
  return url.toString()
}
