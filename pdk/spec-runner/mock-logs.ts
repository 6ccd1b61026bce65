/**
 * The mock upstream's log locations (Kong's test nginx template: /post_log, /post_auth_log, /read_log,
 * /count_log, /reset_log), answered in process: http-log's specs point the plugin at /post_log/<name> and
 * read back what it sent. One store per spec file, as Kong's lives in a shared dict of the test Kong.
 */
import type { UpstreamAnswer, UpstreamRequest } from './mock-upstream.js'

interface Kept {
  entry: unknown
  log_req_headers: Record<string, string | string[]>
}

const LOCATION = /^\/(post_log|read_log|count_log|reset_log)\/([a-z0-9_]+)$/
/** /post_auth_log/<name>/<user>/<password>: /post_log behind basic credentials (nginx matches the decoded $uri). */
const AUTH_LOCATION = /^\/post_auth_log\/([a-z0-9_]+)\/([a-zA-Z0-9_]+)\/(.+)$/
const json = { 'Content-Type': 'application/json' }

/** nginx's own page for a 401 (ngx.exit(401) in the mock upstream's access phase). */
const UNAUTHORIZED =
  '<html>\r\n<head><title>401 Authorization Required</title></head>\r\n<body>\r\n' +
  '<center><h1>401 Authorization Required</h1></center>\r\n<hr><center>openresty</center>\r\n</body>\r\n</html>\r\n'

/** ngx.decode_base64: the alphabet up to the first `=`, any padding, undefined for anything else. */
function decodeBase64(text: string): string | undefined {
  const data = text.split('=')[0]!
  if (!/^[A-Za-z0-9+/]*$/.test(data) || data.length % 4 === 1) return undefined
  return Buffer.from(data, 'base64').toString('latin1')
}

/** The user and password of a header's basic credentials, read as the mock upstream reads them. */
function basicCredentials(header: string | string[] | undefined): [string, string | undefined] | undefined {
  const value = Array.isArray(header) ? header[0] : header
  const encoded = value === undefined ? undefined : /\s*[Bb]asic\s*(.+)/.exec(value)?.[1]
  const decoded = encoded === undefined ? undefined : decodeBase64(encoded)
  if (decoded === undefined) return undefined
  // split at most in three at ':': a password ends at a second colon
  const [user, password] = decoded.split(':')
  return [user!, password]
}

const header = (req: UpstreamRequest, name: string) =>
  Object.entries(req.headers).find(([k]) => k.toLowerCase() === name)?.[1]

export class MockLogs {
  private readonly logs = new Map<string, Kept[]>()

  /** The answer of a log location, or undefined for any other path (the rest of the mock upstream answers it). */
  answer(req: UpstreamRequest): UpstreamAnswer | undefined {
    const auth = AUTH_LOCATION.exec(locationPath(req.path))
    if (auth) return this.postWithAuth(auth[1]!, auth[2]!, auth[3]!, req)
    const m = LOCATION.exec(req.path)
    if (!m) return undefined
    const [, op, name] = m as unknown as [string, string, string]
    const kept = this.logs.get(name)
    if (op === 'post_log') return this.post(name, req)
    if (op === 'reset_log') {
      this.logs.delete(name)
      return { status: 200, headers: {}, body: '' }
    }
    if (op === 'count_log') {
      // Kong's location fails (500) for a log nothing was posted to
      if (!kept) return { status: 500, headers: {}, body: '' }
      return { status: 200, headers: json, body: `${kept.length}\n` }
    }
    const entries = (kept ?? []).map((k) => ({ ...(k.entry as object), log_req_headers: k.log_req_headers }))
    return {
      status: 200,
      headers: json,
      body: JSON.stringify(kept ? { entries, count: kept.length } : { entries }) + '\n',
    }
  }

  /** Kong's mock upstream checks Proxy-Authorization, else Authorization; a mismatch is nginx's 401, nothing kept. */
  private postWithAuth(name: string, user: string, password: string, req: UpstreamRequest): UpstreamAnswer {
    const given = basicCredentials(header(req, 'proxy-authorization')) ?? basicCredentials(header(req, 'authorization'))
    if (given?.[0] !== user || given[1] !== password)
      return {
        status: 401,
        headers: { 'Content-Type': 'text/html', 'WWW-Authenticate': 'mock_upstream', 'X-Powered-By': 'mock_upstream' },
        body: UNAUTHORIZED,
      }
    return this.post(name, req)
  }

  private post(name: string, req: UpstreamRequest): UpstreamAnswer {
    let decoded: unknown
    try {
      decoded = JSON.parse(req.body)
    } catch {
      return { status: 500, headers: {}, body: `broker: /post_log/${name} reads a JSON body\n` }
    }
    // a batch is a JSON array; one entry alone (a queue of 1, as older http-log sent) is kept as itself
    const entries = Array.isArray(decoded) && decoded.length > 0 ? decoded : [decoded]
    const headers: Record<string, string | string[]> = {}
    for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) headers[k.toLowerCase()] = v
    const kept = this.logs.get(name) ?? []
    for (const entry of entries) kept.push({ entry, log_req_headers: headers })
    this.logs.set(name, kept)
    return { status: 200, headers: {}, body: '' }
  }
}

/** The path as nginx matches its locations: decoded (a malformed escape stays as sent). */
function locationPath(path: string): string {
  try {
    return decodeURIComponent(path)
  } catch {
    return path
  }
}
