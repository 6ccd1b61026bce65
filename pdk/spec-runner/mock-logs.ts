/**
 * The mock upstream's log locations (Kong's test nginx template: /post_log, /read_log, /count_log,
 * /reset_log), answered in process: http-log's specs point the plugin at /post_log/<name> and read back
 * what it sent. One store per spec file, as Kong's lives in a shared dict of the test Kong.
 */
import type { UpstreamAnswer, UpstreamRequest } from './mock-upstream.js'

interface Kept {
  entry: unknown
  log_req_headers: Record<string, string | string[]>
}

const LOCATION = /^\/(post_log|read_log|count_log|reset_log)\/([a-z0-9_]+)$/
const json = { 'Content-Type': 'application/json' }

export class MockLogs {
  private readonly logs = new Map<string, Kept[]>()

  /** The answer of a log location, or undefined for any other path (the rest of the mock upstream answers it). */
  answer(req: UpstreamRequest): UpstreamAnswer | undefined {
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
