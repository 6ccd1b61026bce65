/**
 * What broker's resty.http sends through: each request is answered from the fixture's `outbound`
 * entries (pdk/fixture/outbound.ts), recorded for `expect.outbound`, and shown in the trace as
 * `resty.http.<method the plugin called>`. A request no entry answers is kept in the host state,
 * which fails the fixture (the runtime reads it when the phase ends).
 */
import type { Context, SentRequest } from '../../kit/context.js'
import type { HeadersTable } from '../../kit/private/headers.js'
import { answerOf, unmatchedMessage } from '../../fixture/outbound.js'
import { bytesOf } from './codec.js'
import type { HostOp, HostState } from './types.js'

// a plugin may make its client at load time, when only the bridge has the probe's context
const contextOf = (s: HostState): Context | undefined => s.ctx ?? s.bridge.ctx

const text = (v: unknown): string => (v === undefined || v === null ? '' : bytesOf(v).toString('utf8'))

/** Lua's header table (a value, or a list of them for a repeated header) as a headers table. */
function headersOf(input: unknown): HeadersTable {
  const out: HeadersTable = {}
  if (typeof input !== 'object' || input === null) return out
  for (const [name, value] of Object.entries(input)) {
    out[name] = Array.isArray(value) ? value.map(text) : text(value)
  }
  return out
}

export const HTTP_OPS: Record<string, HostOp> = {
  /** Whether the fixture answers resty.http calls (it has `outbound`). */
  http_enabled: (s) => [contextOf(s)?.data.outbound !== undefined],
  /**
   * `call` (request_uri, request), method, url, headers, body → status, reason, headers, body; or
   * nil, err (an entry's `error`); or false, message when no entry answers.
   */
  http_send: (s, call, method, url, headers, body) => {
    const ctx = contextOf(s)
    // resty.http's calls by their method name; socket.http's and ssl.https's by their full name
    const name = String(call).includes('.') ? String(call) : `resty.http.${String(call)}`
    const sent: SentRequest = { method: text(method), url: text(url), headers: headersOf(headers), body: text(body) }
    const args = [sent.method, sent.url]
    const answer = ctx?.data.outbound ? answerOf(ctx.data.outbound, sent) : undefined
    ctx?.outbound.push(sent)
    if (!answer) {
      const message = unmatchedMessage(name, sent)
      s.unmatched ??= message
      s.bridge.record?.({ call: name, args, throws: message })
      return [false, message]
    }
    if ('error' in answer) {
      s.bridge.record?.({ call: name, args, returns: [undefined, answer.error] })
      return [undefined, answer.error]
    }
    s.bridge.record?.({ call: name, args, returns: [answer.status] })
    return [answer.status, answer.reason, answer.headers, answer.body]
  },
}
