/** pdk.response: the response the client will get. */
import type { Context } from '../context.js'
import { checkLimit } from '../private/args.js'
import { isTransferEncoding, normalizeHeader, validateHeader, validateHeaders } from '../private/checks.js'
import type { HeadersTable } from '../private/headers.js'
import { checkPhase, KONG, phaseRule, phaseSet, SETS } from '../private/phases.js'
import { values, type Values } from '../private/values.js'
import { textOrBytes, isStringOrBytes } from '../private/bytes.js'
import { errorBody, isGrpc, responseType, statusMessage } from './formats.js'
import { sendHttp, sendStream } from './send.js'

const R = phaseRule(KONG.header_body_log, SETS.R)
const H = phaseRule(KONG.rewrite_access_header, SETS.H)
// Kong allows exit and error wherever headers may still be set (the response phase since 2.2)
const EXIT_PHASES = phaseRule(KONG.rewrite_access_header, phaseSet('rewrite', 'access', 'admin_api', 'header_filter'))
// Kong's stream exit checks no phase
const STREAM_EXIT_PHASES = phaseRule('any', phaseSet('preread'))
const ERROR_PHASES = phaseRule(KONG.rewrite_access_header, phaseSet('rewrite', 'access', 'admin_api', 'header_filter'))
const BODY_FILTER = phaseRule(phaseSet('body_filter'))

/** Builds pdk.response; `log` writes the kit's own notices (Transfer-Encoding, L4 errors). */
export function createResponse(ctx: Context, log: { warn: (msg: string) => void; err: (msg: string) => void }) {
  const res = ctx.response
  const warn = (msg: string): void => log.warn(msg)
  const headerName = (name: string) =>
    ctx.config.lua_transform_underscores_in_response_headers ? name.replace(/_/g, '-') : name

  const checkStatus = (status: unknown, min = 100) => {
    if (typeof status !== 'number') throw new Error('code must be a number')
    if (status < min || status > 599) throw new Error(`code must be a number between ${min} and 599`)
  }
  // the reference refuses a body in header_filter; Kong's code sends it (under --strict the reference holds)
  const endBodyInHeaderFilter = (body: unknown) => {
    if (ctx.strict && ctx.phase === 'header_filter' && body !== undefined && body !== null) {
      throw new Error('function cannot be called in header_filter phase with a body (only with a nil body)')
    }
  }

  const api = {
    get_status(): number {
      checkPhase(ctx, R)
      return res.status
    },
    get_header(name: string): string | undefined {
      checkPhase(ctx, R)
      if (typeof name !== 'string') throw new Error('header name must be a string')
      // Kong reads get_headers(), so only the first lua_max_resp_headers headers are seen
      return res.headers.getLimited(name, ctx.config.lua_max_resp_headers)
    },
    get_headers(max_headers?: number): HeadersTable | Values {
      checkPhase(ctx, R)
      checkLimit('max_headers', max_headers)
      const { headers, truncated } = res.headers.table(max_headers ?? ctx.config.lua_max_resp_headers)
      return truncated ? values(headers, 'truncated') : headers
    },
    get_source(): 'exit' | 'error' | 'service' {
      checkPhase(ctx, R)
      if (res.unexpected) return 'error'
      if (res.exited) return 'exit'
      if (res.proxied) return 'service'
      return 'error'
    },
    set_status(status: number): void {
      checkPhase(ctx, H)
      checkStatus(status)
      res.status = status
    },
    set_header(name: string, value: unknown): void {
      checkPhase(ctx, H)
      validateHeader(name, value)
      if (isTransferEncoding(name)) return warn('manually setting Transfer-Encoding. Ignored.')
      res.headers.set(headerName(name), normalizeHeader(value))
    },
    add_header(name: string, value: unknown): void {
      checkPhase(ctx, H)
      validateHeader(name, value)
      res.headers.add(headerName(name), normalizeHeader(value))
    },
    clear_header(name: string): void {
      checkPhase(ctx, H)
      if (typeof name !== 'string') throw new Error('header name must be a string')
      res.headers.clear(name)
    },
    set_headers(headers: Record<string, unknown>): void {
      checkPhase(ctx, H)
      validateHeaders(headers)
      for (const name of Object.keys(headers).sort()) {
        if (isTransferEncoding(name)) warn('manually setting Transfer-Encoding. Ignored.')
        else res.headers.set(headerName(name), normalizeHeader(headers[name]))
      }
    },
    exit(status: number, body?: unknown, headers?: Record<string, unknown>): void {
      if (ctx.subsystem === 'stream') {
        checkPhase(ctx, STREAM_EXIT_PHASES)
        return sendStream(ctx, status, body, log.err)
      }
      checkPhase(ctx, EXIT_PHASES)
      checkStatus(status)
      if (body !== undefined && body !== null && typeof body !== 'string' && typeof body !== 'object') {
        throw new Error('body must be a nil, string or table')
      }
      if (headers !== undefined && headers !== null) {
        if (typeof headers !== 'object') throw new Error('headers must be a nil or table')
        validateHeaders(headers)
      }
      endBodyInHeaderFilter(body)
      sendHttp(ctx, status, body ?? undefined, headers ?? undefined, warn)
    },
    error(status: number, message?: unknown, headers?: Record<string, unknown>): void {
      checkPhase(ctx, ERROR_PHASES)
      checkStatus(status, 400)
      if (message !== undefined && message !== null) {
        if (typeof message === 'object') message = JSON.stringify(message)
        if (typeof message !== 'string') throw new Error('message must be a nil, a string or a table')
      }
      if (headers !== undefined && headers !== null) {
        if (typeof headers !== 'object') throw new Error('headers must be a nil or table')
        validateHeaders(headers)
      }
      const out: Record<string, unknown> = { ...(headers ?? {}) }
      const ctKey = Object.keys(out).find((k) => /^content[-_]type$/i.test(k))
      let contentType: string
      if (ctKey !== undefined) {
        const v = out[ctKey]
        contentType = String(Array.isArray(v) ? v[0] : v)
      } else {
        contentType = isGrpc(ctx)
          ? 'application/grpc'
          : responseType(ctx.request.headers.all('accept').join(',') || undefined)
        out['Content-Type'] = contentType
      }
      const body =
        contentType === 'application/grpc'
          ? undefined
          : errorBody(contentType, (message as string | undefined) ?? statusMessage(status), ctx.requestId)
      sendHttp(ctx, status, body, out, warn)
    },
    get_raw_body(): string | Buffer {
      checkPhase(ctx, BODY_FILTER)
      return textOrBytes(res.body ?? Buffer.alloc(0))
    },
    set_raw_body(body: string | Buffer): void {
      checkPhase(ctx, BODY_FILTER)
      if (!isStringOrBytes(body)) throw new Error('body must be a string')
      res.body = Buffer.from(body === '' ? '\n' : body)
    },
  }
  return api
}
