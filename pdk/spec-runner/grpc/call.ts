/**
 * A grpcurl call both ways: the HTTP/2 request it makes (as nginx sees it: POST /<service>/<method>,
 * content-type application/grpc, the :authority as Host, the metadata as headers, the messages
 * framed), and what grpcurl prints of the answer, read as the grpc-go of Kong's grpcurl reads one: the
 * status from grpc-status (from HTTP's status when the answer's content type is not gRPC; Kong's specs
 * expect ResourceExhausted for rate-limiting's 429 with a gRPC content type), the messages, and with -v the
 * method, the metadata, the response headers and trailers. Kong's helper returns the printed text
 * with ok only when grpcurl would exit 0.
 */
import { STATUS_CODES } from 'node:http'
import { GRPC_MESSAGES } from '../pdk.js'
import type { GrpcCall } from './grpcurl.js'
import { decodeMessage, encodeMessage, frame, unframe } from './proto.js'

/** grpc-go's User-Agent after grpcurl's (a -user-agent goes in front, as grpcurl puts it). */
const USER_AGENT = 'grpcurl/v1.8.9 grpc-go/1.57.0'

type Headers = Record<string, string | string[]>

/** The request of a call, or what grpcurl prints when a message does not fit the method's input type. */
export function grpcRequest(
  call: GrpcCall,
): { path: string; headers: Headers; body: Buffer } | { ok: false; output: string } {
  const input = call.method.input
  const messages: Buffer[] = []
  for (const m of call.messages) {
    const value: Record<string, string> = {}
    for (const [k, v] of Object.entries(m)) {
      const field = input.fields.find((f) => f.name === k)
      if (!field) {
        if (call.allowUnknownFields) continue
        return fail(call, `message type ${input.name} has no known field named ${k}`)
      }
      if (v === null) continue
      if (typeof v !== 'string') return fail(call, `bad value for field ${k}: json: cannot unmarshal into a string`)
      value[k] = v
    }
    messages.push(encodeMessage(input, value))
  }
  // a unary call without -d sends one empty message (grpcurl counts none)
  if (!messages.length && !call.method.clientStreaming) messages.push(Buffer.alloc(0))
  const headers: Headers = {
    host: call.authority ?? `${call.host}:${call.port}`,
    'content-type': 'application/grpc',
    te: 'trailers',
    'user-agent': call.userAgent ? `${call.userAgent} ${USER_AGENT}` : USER_AGENT,
  }
  for (const [name, value] of call.metadata) {
    const had = headers[name]
    headers[name] = had === undefined ? value : [...([] as string[]).concat(had), value]
  }
  return { path: `/${call.method.service}/${call.method.name}`, headers, body: frame(messages) }
}

const fail = (call: GrpcCall, why: string) => ({
  ok: false as const,
  output: `Error invoking method "${call.symbol}": error getting request data: ${why}\n`,
})

/** The answer as grpcurl receives it: a trailers-only one carries grpc-status in `headers` and no `trailers`. */
export interface GrpcAnswer {
  status: number
  headers: Headers
  body: Buffer
  trailers?: Headers
}

// grpc-go's code for an answer that is not gRPC, by HTTP status (anything else is Unknown)
const HTTP_CODES: Record<number, number> = { 400: 13, 401: 16, 403: 7, 404: 12, 429: 14, 502: 14, 503: 14, 504: 14 }
// what grpc-go keeps out of the metadata it hands grpcurl, and what HTTP/2 cannot carry
const RESERVED = new Set(['grpc-status', 'grpc-message', 'grpc-status-details-bin', 'connection', 'keep-alive'])
RESERVED.add('transfer-encoding').add('upgrade').add('proxy-connection')

/** What grpcurl prints (stdout, then stderr) for a call and its answer; ok when it exits 0. */
export function grpcurlOutput(call: GrpcCall, answer: GrpcAnswer): { ok: boolean; output: string } {
  const lower = (h: Headers) => Object.fromEntries(Object.entries(h).map(([k, v]) => [k.toLowerCase(), v]))
  const headers = lower(answer.headers)
  const first = (h: Headers, k: string) => (h[k] === undefined ? undefined : String([h[k]].flat()[0]))
  const type = first(headers, 'content-type')
  // a gRPC content type makes grpc-status the outcome, whatever HTTP's status (Kong's kong.response.error
  // sets one); without one grpc-go falls back to HTTP's status
  const grpc = type !== undefined && /^application\/grpc($|[+;])/.test(type)
  let code: number
  let message: string
  let shownHeaders: Headers = {}
  let trailers: Headers = {}
  let replies: string[] = []
  if (grpc && answer.trailers) {
    // headers, messages, trailers: a whole stream
    shownHeaders = headers
    trailers = lower(answer.trailers)
    code = Number(first(trailers, 'grpc-status') ?? 2)
    message = percentDecoded(first(trailers, 'grpc-message') ?? '')
    const read = messagesOf(call, answer.body)
    if (read instanceof Error) [code, message] = [13, `grpc: failed to unmarshal the received message ${read.message}`]
    else if (code === 0) replies = read
  } else if (grpc) {
    // trailers-only: an error Kong answered itself
    trailers = headers
    code = Number(first(headers, 'grpc-status') ?? 2)
    message = percentDecoded(first(headers, 'grpc-message') ?? '')
  } else {
    code = HTTP_CODES[answer.status] ?? 2
    const why = type
      ? `transport: received the unexpected content-type "${type}"`
      : 'transport: missing content-type field'
    message = `${STATUS_CODES[answer.status] ?? ''}: HTTP status code ${answer.status}; ${why}`
  }
  const out: string[] = []
  const verbose = call.verbosity > 0
  if (verbose) {
    const { name, input, output, clientStreaming: cs, serverStreaming: ss } = call.method
    const rpc = `rpc ${name} ( ${cs ? 'stream ' : ''}.${input.name} ) returns ( ${ss ? 'stream ' : ''}.${output.name} );`
    out.push(`\nResolved method descriptor:\n${rpc}\n`)
    const sent: Headers = {}
    for (const [k, v] of call.metadata) sent[k] = [...[sent[k] ?? []].flat(), v]
    out.push(`\nRequest metadata to send:\n${metadataText(sent)}\n`)
    out.push(`\nResponse headers received:\n${metadataText(shownHeaders)}\n`)
  }
  for (const r of replies) out.push(verbose ? `\nResponse contents:\n${r}\n` : `${r}\n`)
  if (verbose) {
    out.push(`\nResponse trailers received:\n${metadataText(trailers)}\n`)
    const n = call.messages.length
    const m = replies.length
    out.push(`Sent ${n} request${n === 1 ? '' : 's'} and received ${m} response${m === 1 ? '' : 's'}\n`)
  }
  if (code !== 0) out.push(`ERROR:\n  Code: ${GRPC_MESSAGES[code] ?? `Code(${code})`}\n  Message: ${message}\n`)
  return { ok: code === 0, output: out.join('') }
}

/** The answer's messages as grpcurl prints them: indented JSON, HTML's characters escaped as Go escapes them. */
function messagesOf(call: GrpcCall, body: Buffer): string[] | Error {
  const frames = unframe(body)
  if (frames instanceof Error) return frames
  try {
    return frames.map((f) =>
      JSON.stringify(decodeMessage(call.method.output, f), null, 2).replace(
        /[<>&\u2028\u2029]/g,
        (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
      ),
    )
  } catch (e) {
    return e as Error
  }
}

/** Metadata as grpcurl lists it: sorted by name, one `name: value` line per value, `(empty)` for none. */
function metadataText(md: Headers): string {
  const lines: string[] = []
  for (const name of Object.keys(md).sort()) {
    if (name.startsWith(':') || RESERVED.has(name)) continue
    for (const v of [md[name]!].flat())
      lines.push(`${name}: ${name.endsWith('-bin') ? Buffer.from(v).toString('base64') : v}`)
  }
  return lines.length ? lines.join('\n') : '(empty)'
}

/** grpc-message is percent-encoded on the wire; grpc-go decodes it. */
function percentDecoded(m: string): string {
  try {
    return decodeURIComponent(m.replace(/%(?![0-9A-Fa-f]{2})/g, '%25'))
  } catch {
    return m
  }
}
