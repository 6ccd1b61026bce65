import { CookieJar } from 'tough-cookie'

export interface Hop {
  method: string
  url: string
  status: number
  location?: string
}

export interface BrowseResult {
  hops: Hop[]
  /** The last response (not a redirect), read as text. */
  status: number
  body: string
  url: string
  headers: Headers
}

/** A cookie-keeping client that follows every 302 like a browser, recording each hop. */
export class Browser {
  readonly jar = new CookieJar()

  async go(
    url: string,
    init: { method?: string; body?: string; headers?: Record<string, string> } = {},
    maxHops = 20,
  ): Promise<BrowseResult> {
    const hops: Hop[] = []
    let current = url
    let method = init.method ?? 'GET'
    let body = init.body
    let headers = init.headers ?? {}
    for (let i = 0; i <= maxHops; i++) {
      const cookie = await this.jar.getCookieString(current)
      const res = await fetch(current, {
        method,
        body,
        headers: { ...headers, ...(cookie ? { cookie } : {}) },
        redirect: 'manual',
      })
      for (const set of res.headers.getSetCookie()) await this.jar.setCookie(set, current)
      const location = res.headers.get('location') ?? undefined
      hops.push({ method, url: current, status: res.status, location })
      if (res.status >= 300 && res.status < 400 && location) {
        await res.arrayBuffer()
        current = new URL(location, current).toString()
        if (res.status !== 307 && res.status !== 308) {
          method = 'GET'
          body = undefined
          headers = {}
        }
        continue
      }
      return { hops, status: res.status, body: await res.text(), url: current, headers: res.headers }
    }
    throw new Error(`more than ${maxHops} redirects from ${url}`)
  }
}
