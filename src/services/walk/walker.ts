import { STATUS_CODES } from 'node:http'
import { CookieJar } from 'tough-cookie'
import { displayUrl, oauthParams } from './params.js'

/** One request of a redirect chain, as the walker saw it. */
export interface Hop {
  /** 1-based position in the chain. */
  n: number
  method: string
  /** The URL requested, codes and tokens shortened. */
  url: string
  /** 0 when the request failed before any answer (see `error`). */
  status: number
  /** The Location answered, codes and tokens shortened. */
  location?: string
  /** OAuth parameters of the URL requested, decoded, codes and tokens shortened. */
  params: Record<string, string>
  /** Names of the cookies the answer set (never their values). */
  cookies: string[]
  error?: string
}

/** The answer that ended a chain (not a redirect). */
export interface FinalAnswer {
  status: number
  statusText?: string
  contentType?: string
  /** At most 64 KiB of the body, as text. */
  body: string
}

export interface WalkerOptions {
  /** Hostnames (or host:port) the walk may visit; empty means anywhere. */
  allowHosts?: readonly string[]
  method?: string
  jar?: CookieJar
  headers?: Record<string, string>
  timeoutMs?: number
}

/** done: a final answer below 400; http_error: a 4xx or 5xx answer; error: no answer at all. */
export type StopReason = 'done' | 'http_error' | 'max_hops' | 'host' | 'error'

const REDIRECT = new Set([301, 302, 303, 307, 308])

/**
 * Follows a redirect chain one hop at a time, keeping cookies like a browser. `next()` makes one
 * request and returns its hop; the dashboard drives it step by step, `walk()` in a loop.
 */
export class Walker {
  readonly jar: CookieJar
  private current?: string
  private method: string
  private readonly allow: readonly string[]
  private count = 0
  /** Why the chain ended, once it has. */
  stopped?: { reason: StopReason; message: string }
  final?: FinalAnswer

  constructor(
    start: string,
    private readonly opts: WalkerOptions = {},
  ) {
    this.current = start
    this.method = opts.method ?? 'GET'
    this.jar = opts.jar ?? new CookieJar()
    this.allow = (opts.allowHosts ?? []).map((h) => h.toLowerCase())
  }

  /** Whether a URL is on the allowed hosts (always, when none were given). */
  allowed(url: string): boolean {
    if (!this.allow.length) return true
    const u = new URL(url)
    return this.allow.includes(u.hostname.toLowerCase()) || this.allow.includes(u.host.toLowerCase())
  }

  /** Requests the next URL of the chain; undefined once the chain has ended. */
  async next(): Promise<Hop | undefined> {
    const url = this.current
    if (!url || this.stopped) return undefined
    this.current = undefined
    const hop: Hop = {
      n: ++this.count,
      method: this.method,
      url: displayUrl(url),
      status: 0,
      params: oauthParams(url),
      cookies: [],
    }
    if (!this.allowed(url)) {
      this.stopped = { reason: 'host', message: `${new URL(url).host} is not an --allow-host` }
      this.count--
      return undefined
    }
    let res: Response
    try {
      const cookie = await this.jar.getCookieString(url)
      res = await fetch(url, {
        method: this.method,
        redirect: 'manual',
        headers: { ...this.opts.headers, ...(cookie ? { cookie } : {}) },
        signal: AbortSignal.timeout(this.opts.timeoutMs ?? 15_000),
      })
    } catch (err) {
      hop.error = describe(err)
      this.stopped = { reason: 'error', message: `${new URL(url).host}: ${hop.error}` }
      return hop
    }
    hop.status = res.status
    for (const set of res.headers.getSetCookie()) {
      const cookie = await this.jar.setCookie(set, url, { ignoreError: true })
      if (cookie) hop.cookies.push(cookie.key)
    }
    const location = res.headers.get('location')
    if (REDIRECT.has(res.status) && location) {
      await res.arrayBuffer().catch(() => undefined)
      const nextUrl = new URL(location, url).toString()
      hop.location = displayUrl(nextUrl)
      if (res.status !== 307 && res.status !== 308) this.method = 'GET'
      if (!this.allowed(nextUrl))
        this.stopped = { reason: 'host', message: `stopped before ${new URL(nextUrl).host}: not an --allow-host` }
      else this.current = nextUrl
      return hop
    }
    const body = await res.text().catch(() => '')
    this.final = {
      status: res.status,
      statusText: res.statusText || STATUS_CODES[res.status],
      contentType: res.headers.get('content-type') ?? undefined,
      body: body.slice(0, 65_536),
    }
    const status = `${res.status}${this.final.statusText ? ` ${this.final.statusText}` : ''}`
    this.stopped =
      res.status >= 400
        ? { reason: 'http_error', message: `the chain ended in an error: ${status}` }
        : { reason: 'done', message: `the final answer: ${status}` }
    return hop
  }

  /** The URL the chain would request next, if it goes on. */
  get pending(): string | undefined {
    return this.current
  }
}

function describe(err: unknown): string {
  const e = err as Error & { cause?: { code?: string; message?: string } }
  if (e.name === 'TimeoutError') return 'no answer in time'
  return e.cause?.code ?? e.cause?.message ?? e.message
}
