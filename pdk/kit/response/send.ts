/** Producing a response from response.exit / response.error (Kong's `send`), HTTP and L4. */
import type { Context } from '../context.js'
import { isTransferEncoding, normalizeHeader } from '../private/checks.js'
import { isGrpc } from './formats.js'
import { luaJson } from '../private/values.js'

const HTTP_TO_GRPC: Record<number, number> = {
  200: 0,
  400: 3,
  401: 16,
  403: 7,
  404: 5,
  409: 6,
  429: 8,
  499: 1,
  500: 13,
  501: 12,
  503: 14,
  504: 4,
}
/** gRPC's status names by code: Kong's grpc-message for a status, and what grpcurl prints as `Code:`. */
export const GRPC_MESSAGES = [
  'OK',
  'Canceled',
  'Unknown',
  'InvalidArgument',
  'DeadlineExceeded',
  'NotFound',
  'AlreadyExists',
  'PermissionDenied',
  'ResourceExhausted',
  'FailedPrecondition',
  'Aborted',
  'OutOfRange',
  'Unimplemented',
  'Internal',
  'Unavailable',
  'DataLoss',
  'Unauthenticated',
]

function grpcStatus(status: number): number {
  const known = HTTP_TO_GRPC[status]
  if (known !== undefined) return known
  if (status >= 500) return 13
  if (status >= 400) return 3
  if (status >= 200 && status <= 299) return 0
  return 2
}

/** Ends the phase with an HTTP response: table bodies become JSON, Content-Length is set unless given. */
export function sendHttp(
  ctx: Context,
  status: number,
  body: unknown,
  headers: Record<string, unknown> | undefined,
  warn: (msg: string) => void,
): void {
  const res = ctx.response
  res.status = status
  let hasType = false
  let hasLength = false
  for (const [name, value] of Object.entries(headers ?? {})) {
    if (isTransferEncoding(name)) warn('manually setting Transfer-Encoding. Ignored.')
    else res.headers.set(name, normalizeHeader(value))
    if (/^content[-_]type$/i.test(name)) hasType = true
    if (/^content[-_]length$/i.test(name)) hasLength = true
  }
  const resType = res.headers.get('content-type')
  const grpcOutput = resType !== undefined && resType.startsWith('application/grpc')
  const grpc = resType !== undefined ? grpcOutput : isGrpc(ctx)
  let gstatus: number | undefined
  if (grpc && !res.headers.has('grpc-status')) {
    gstatus = grpcStatus(status)
    res.headers.set('grpc-status', String(gstatus))
  }
  let json: string | undefined
  if (typeof body === 'object' && body !== null && !Buffer.isBuffer(body)) {
    if (grpc) {
      if (grpcOutput) throw new Error('table body encoding with gRPC is not supported')
      const message = (body as Record<string, unknown>).message
      if (typeof message === 'string') body = message
      else {
        warn('body was removed because table body encoding with gRPC is not supported')
        body = undefined
      }
    } else {
      json = luaJson(body)
    }
  }
  if (json !== undefined) {
    if (!hasType) res.headers.set('Content-Type', 'application/json; charset=utf-8')
    if (!hasLength) res.headers.set('Content-Length', String(Buffer.byteLength(json)))
    res.body = Buffer.from(json)
  } else if (body !== undefined && body !== null) {
    // a Lua string is bytes: a Buffer body is kept as it is (digests, NUL bytes)
    const text = Buffer.isBuffer(body) ? body : String(body)
    if (grpc && !grpcOutput) {
      res.headers.set('Content-Length', '0')
      res.headers.set('grpc-message', text.toString())
      res.body = Buffer.alloc(0)
    } else {
      if (!hasLength) res.headers.set('Content-Length', String(Buffer.byteLength(text)))
      if (gstatus !== undefined && !res.headers.has('grpc-message'))
        res.headers.set('grpc-message', GRPC_MESSAGES[gstatus]!)
      res.body = Buffer.from(text)
    }
  } else {
    if (!hasLength) res.headers.set('Content-Length', '0')
    if (gstatus !== undefined && !res.headers.has('grpc-message'))
      res.headers.set('grpc-message', GRPC_MESSAGES[gstatus]!)
    res.body = Buffer.alloc(0)
  }
  res.exited = true
  ctx.phaseEnded = true
}

const L4_STATUSES = new Set([200, 400, 403, 500, 502, 503])

/** L4 exit (Kong's send_stream): a table body is JSON; below 400 the body goes to the client, from 400 to the error log. */
export function sendStream(ctx: Context, status: unknown, body: unknown, logErr: (msg: string) => void): void {
  if (typeof status !== 'number') throw new Error('code must be a number')
  if (!L4_STATUSES.has(status)) throw new Error('unacceptable code, only 200, 400, 403, 500, 502 and 503 are accepted')
  if (body !== undefined && body !== null) {
    if (typeof body === 'object' && !Buffer.isBuffer(body)) body = luaJson(body)
    if (typeof body !== 'string' && !Buffer.isBuffer(body)) throw new Error('body must be a nil, string or table')
  }
  const res = ctx.response
  res.status = status
  res.body = Buffer.alloc(0)
  if (typeof body === 'string' || Buffer.isBuffer(body)) {
    if (status < 400) res.body = Buffer.isBuffer(body) ? body : Buffer.from(body)
    else logErr(`unable to proxy stream connection, status: ${status}, err: ${body.toString()}`)
  }
  res.exited = true
  ctx.phaseEnded = true
}
