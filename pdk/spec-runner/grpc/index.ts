/**
 * spec.helpers' proxy_client_grpc / proxy_client_grpcs, Kong's grpcurl helper in process: the
 * command line read as grpcurl reads it (grpcurl.ts), the call made as an HTTP/2 request (call.ts)
 * through Kong in process, or straight to grpcbin at its own address (grpcbin.ts), and the answer
 * printed as grpcurl prints it. Nothing goes over a socket: no HTTP/2 framing, no TLS, no reflection.
 */
import { grpcRequest, grpcurlOutput, type GrpcAnswer } from './call.js'
import { grpcbin, GRPCBIN_PORT, GRPCBIN_SSL_PORT } from './grpcbin.js'
import { GrpcurlNotEmulated, parseGrpcurl } from './grpcurl.js'
import type { Transport } from './runloop.js'

export { grpcbin, isGrpcbin, GRPCBIN_HOST, GRPCBIN_PORT, GRPCBIN_SSL_PORT } from './grpcbin.js'
export { grpcRouteRefusal, grpcKongError, grpcServiceNotEmulated, isGrpcRequest, type Transport } from './runloop.js'
export type { GrpcAnswer } from './call.js'

/** What the Lua helper sends: grpcurl's options as Kong's helper joins them, the target and the service. */
export interface GrpcurlLine {
  args: string
  target: string
  service: string
}

/** Kong's helper's result (ok and grpcurl's output), or an error the spec's line raises. */
export type GrpcurlResult = { ok: boolean; output: string; log?: string[] } | { raise: string }

/** Kong in process, as a gRPC call needs it: the request with its transport, the answer with its trailers. */
export type ProxyThrough = (
  request: { method: string; path: string; headers: Record<string, string | string[]> },
  transport: Transport,
) => Promise<(GrpcAnswer & { log?: string[] }) | { raise: string }>

/** Runs one grpcurl command line of a spec. */
export async function runGrpcurl(line: GrpcurlLine, proxy: ProxyThrough): Promise<GrpcurlResult> {
  let call
  try {
    call = parseGrpcurl(line.args, line.target, line.service)
  } catch (e) {
    if (e instanceof GrpcurlNotEmulated) return { raise: `spec.helpers.proxy_client_grpc: ${e.message}` }
    throw e
  }
  if ('ok' in call) return call
  const request = grpcRequest(call)
  if ('ok' in request) return request
  // grpcbin's own address: the call does not go through Kong
  if (call.port === GRPCBIN_PORT || call.port === GRPCBIN_SSL_PORT)
    return grpcurlOutput(call, grpcbin({ method: 'POST', ...request }))
  const answer = await proxy(
    { method: 'POST', path: request.path, headers: request.headers },
    { scheme: call.tls ? 'https' : 'http', port: call.port, http2: true, body: request.body },
  )
  if ('raise' in answer) return answer
  return { ...grpcurlOutput(call, answer), ...(answer.log ? { log: answer.log } : {}) }
}
