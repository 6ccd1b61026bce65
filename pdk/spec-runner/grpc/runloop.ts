/**
 * What Kong's runloop does with gRPC around the router and the balancer: a route listing grpc or
 * grpcs refuses a request that is not gRPC over HTTP/2 (415, 426) and a plaintext call on a
 * grpcs-only route; Kong's own errors to a gRPC request are gRPC statuses; a grpc:// service that
 * is not grpcbin answers Unavailable, naming itself.
 */
import { grpcError, type GrpcbinAnswer } from './grpcbin.js'

type Headers = Record<string, string | string[]>

/** How the client reached Kong: its scheme and port, HTTP/2 or not. */
export interface Transport {
  scheme: 'http' | 'https'
  port: number
  http2: boolean
  /** The request body as bytes (a gRPC body is binary). */
  body?: Buffer
}

export const isGrpcRequest = (headers: Headers, transport: Transport | undefined): boolean =>
  transport?.http2 === true && (header(headers, 'content-type')?.startsWith('application/grpc') ?? false)

const json = (status: number, message: string, extra: Record<string, string> = {}) => ({
  status,
  headers: { 'Content-Type': 'application/json; charset=utf-8', ...extra },
  body: JSON.stringify({ message }),
})

/** Kong's refusal of a request its router matched to a gRPC route, or undefined when the request fits. */
export function grpcRouteRefusal(
  protocols: readonly string[],
  headers: Headers,
  transport: Transport | undefined,
): { status: number; headers: Record<string, string>; body: string } | undefined {
  const grpc = protocols.includes('grpc')
  if (!grpc && !protocols.includes('grpcs')) return undefined
  if (!header(headers, 'content-type')?.startsWith('application/grpc'))
    return json(415, 'Non-gRPC request matched gRPC route')
  if (!transport?.http2) return json(426, 'Please use HTTP2 protocol', { Connection: 'Upgrade', Upgrade: 'HTTP/2' })
  if (!grpc && transport.scheme !== 'https')
    return {
      status: 200,
      headers: {
        'content-type': 'application/grpc',
        'grpc-status': '1',
        'grpc-message': 'gRPC request matched gRPCs route',
      },
      body: '',
    }
  return undefined
}

/** Kong's error to a gRPC request (kong.response.error): the HTTP status kept, grpc-status and grpc-message set. */
export function grpcKongError(status: number, code: number, message: string) {
  const a = grpcError(code, message, status)
  return { status: a.status, headers: a.headers, body: '' }
}

/** A grpc:// service broker does not answer: Unavailable, naming it (in place of Kong's 502 when it cannot connect). */
export function grpcServiceNotEmulated(service: Record<string, unknown>): GrpcbinAnswer {
  return grpcError(
    14,
    `broker pdk test: the service ${String(service.protocol)}://${String(service.host)}:${String(service.port)} is not emulated; only grpcbin (helpers.grpcbin_url, helpers.grpcbin_ssl_url) answers gRPC in process`,
    502,
  )
}

function header(headers: Headers, name: string): string | undefined {
  const key = Object.keys(headers).find((k) => k.toLowerCase() === name)
  return key === undefined ? undefined : String(([] as string[]).concat(headers[key]!)[0])
}
