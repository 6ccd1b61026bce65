/**
 * grpcbin, the gRPC service Kong's specs point `helpers.grpcbin_url` at, answered in process: its
 * hello.HelloService as grpcbin implements it (a reply "hello <greeting>", "noname" without one; ten
 * replies to LotsOfReplies; the greetings joined to LotsOfGreetings; one reply per message to
 * BidiHello). A stream is answered whole: every request message is read before the replies are sent.
 */
import { decodeMessage, encodeMessage, frame, methodOf, unframe } from './proto.js'

export const GRPCBIN_HOST = '127.0.0.1'
export const GRPCBIN_PORT = 15002
export const GRPCBIN_SSL_PORT = 15003

/** What grpcbin is sent: the request as HTTP/2 carries it. */
export interface GrpcbinRequest {
  method: string
  path: string
  headers: Record<string, string | string[]>
  body: Buffer
}

/** Its answer: the headers, the framed messages and the trailers (a trailers-only answer has grpc-status in headers). */
export interface GrpcbinAnswer {
  status: number
  headers: Record<string, string>
  body: Buffer
  trailers?: Record<string, string>
}

/** Whether a service row points at grpcbin (either of its ports, by address or as localhost). */
export function isGrpcbin(service: Record<string, unknown> | undefined): boolean {
  const host = String(service?.host ?? '')
  const port = Number(service?.port)
  return (host === GRPCBIN_HOST || host === 'localhost') && (port === GRPCBIN_PORT || port === GRPCBIN_SSL_PORT)
}

const GRPC = 'application/grpc'

/** An error as a gRPC server sends one: a trailers-only answer. */
export const grpcError = (code: number, message: string, status = 200): GrpcbinAnswer => ({
  status,
  headers: { 'content-type': GRPC, 'grpc-status': String(code), 'grpc-message': message },
  body: Buffer.alloc(0),
})

/** grpcbin's answer to one request. */
export function grpcbin(req: GrpcbinRequest): GrpcbinAnswer {
  const type = header(req.headers, 'content-type')
  // grpc-go's server answers what is not gRPC with HTTP's own statuses
  if (req.method !== 'POST')
    return { status: 405, headers: { 'content-type': 'text/plain' }, body: Buffer.from('Method Not Allowed\n') }
  if (!type?.startsWith(GRPC))
    return {
      status: 415,
      headers: { 'content-type': 'text/plain' },
      body: Buffer.from(`invalid gRPC request content-type "${type ?? ''}"\n`),
    }
  const [, service, name] = /^\/([^/]+)\/([^/]+)$/.exec(req.path) ?? []
  if (!service || !name) return grpcError(12, `malformed method name: "${req.path}"`)
  const method = methodOf(`${service}.${name}`)
  if (!method) {
    if (service !== 'hello.HelloService')
      return grpcError(12, `unknown service ${service} (broker emulates grpcbin's hello.HelloService only)`)
    return grpcError(12, `unknown method ${name} for service ${service}`)
  }
  const frames = unframe(req.body)
  if (frames instanceof Error) return grpcError(13, `grpc: error reading the request: ${frames.message}`)
  let greetings: Array<string | undefined>
  try {
    greetings = frames.map((m) => decodeMessage(method.input, m).greeting)
  } catch (e) {
    return grpcError(13, `grpc: error unmarshalling request: ${(e as Error).message}`)
  }
  if (!method.clientStreaming && greetings.length !== 1)
    return grpcError(12, `grpc: ${method.name} takes one request message, got ${greetings.length}`)
  const hello = (g: string | undefined) => `hello ${g ?? 'noname'}`
  const replies =
    method.name === 'SayHello'
      ? [hello(greetings[0])]
      : method.name === 'LotsOfReplies'
        ? Array.from({ length: 10 }, () => hello(greetings[0]))
        : method.name === 'LotsOfGreetings'
          ? [`hello ${greetings.map((g) => g ?? 'noname').join(', ')}`]
          : greetings.map(hello)
  return {
    status: 200,
    headers: { 'content-type': GRPC },
    body: frame(replies.map((reply) => encodeMessage(method.output, { reply }))),
    trailers: { 'grpc-status': '0', 'grpc-message': '' },
  }
}

function header(headers: GrpcbinRequest['headers'], name: string): string | undefined {
  const key = Object.keys(headers).find((k) => k.toLowerCase() === name)
  return key === undefined ? undefined : String(([] as string[]).concat(headers[key]!)[0])
}
