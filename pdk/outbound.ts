/**
 * Outbound HTTP answered from the fixture: the `outbound` entries a Lua plugin's resty.http calls are
 * matched against (in order, the first that matches answers), and the requests the replay made, which
 * `expect.outbound` checks with the same matching.
 */
import { STATUS_CODES } from 'node:http'
import type { OutboundEntry, OutboundRequest } from './fixture-types.generated.js'
import type { HeadersTable } from './headers.js'
import { compareBody, compareHeaders, matches } from './runner/compare.js'
import type { Failure } from './runner/record.js'

/** One request a plugin sent: `url` as scheme://host[:port]/path[?query], the default port left out. */
export interface SentRequest {
  method: string
  url: string
  headers: HeadersTable
  body: string
}

/** What an entry answers: a response, or the error the call returns (`nil, err`). */
export type OutboundAnswer = { status: number; reason: string; headers: HeadersTable; body: string } | { error: string }

/** Where `want` differs from the request sent, each failure under `path`; none when it matches. */
export function requestFailures(want: OutboundRequest, sent: SentRequest, path: string): Failure[] {
  const out: Failure[] = []
  if (want.method !== undefined && !matches(want.method, sent.method))
    out.push({ path: `${path}.method`, expected: want.method, actual: sent.method })
  if (!matches(want.url, sent.url)) out.push({ path: `${path}.url`, expected: want.url, actual: sent.url })
  if (want.headers) compareHeaders(want.headers, sent.headers, `${path}.headers`, out)
  if (want.body !== undefined) compareBody(want.body, sent.body, `${path}.body`, out)
  return out
}

/** The answer of the first entry whose request matches, or undefined when none does. */
export function answerOf(entries: readonly OutboundEntry[], sent: SentRequest): OutboundAnswer | undefined {
  const entry = entries.find((e) => requestFailures(e.request, sent, '').length === 0)
  if (!entry) return undefined
  const res = entry.response
  if ('error' in res) return { error: res.error }
  const headers: HeadersTable = {}
  for (const [name, value] of Object.entries(res.headers ?? {}))
    headers[name] = Array.isArray(value) ? value.map(String) : String(value)
  let body = ''
  if (typeof res.body === 'string') body = res.body
  else if (res.body !== undefined) {
    body = JSON.stringify(res.body)
    if (!Object.keys(headers).some((n) => n.toLowerCase() === 'content-type'))
      headers['Content-Type'] = 'application/json'
  }
  return { status: res.status, reason: STATUS_CODES[res.status] ?? '', headers, body }
}

/** The message of a call no entry answers: the call, and the entry that would answer it. */
export function unmatchedMessage(call: string, sent: SentRequest): string {
  const entry = { request: { method: sent.method, url: sent.url }, response: { status: 200, body: '…' } }
  return `${call}(${sent.method} ${sent.url}) matches no entry of "outbound": add one that answers it, e.g. ${JSON.stringify(entry)}`
}

/** `expect.outbound`: the requests made, in order, each as an entry's request matches. */
export function checkOutbound(want: readonly OutboundRequest[], sent: readonly SentRequest[]): Failure[] {
  const out: Failure[] = []
  want.forEach((w, i) => {
    const got = sent[i]
    if (!got) out.push({ path: `$.expect.outbound[${i}]`, expected: w, actual: null })
    else out.push(...requestFailures(w, got, `$.expect.outbound[${i}]`))
  })
  if (sent.length > want.length)
    out.push({ path: `$.expect.outbound[${want.length}]`, expected: null, actual: sent[want.length] })
  return out
}
