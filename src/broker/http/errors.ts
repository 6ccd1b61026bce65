import { STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyBaseLogger, FastifyError, FastifyInstance } from 'fastify'
import { brokerError, BrokerError, isBrokerError } from '../../errors/index.js'
import { htmlErrorPage, wantsHtmlPage } from './html-error.js'

/** Maps Fastify's own errors to the registry's messages; nothing else reaches a client. */
function fromFastify(err: FastifyError): BrokerError {
  switch (err.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return brokerError('bodyTooLarge')
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return brokerError('unsupportedMediaType')
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return brokerError('invalidJson')
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return brokerError('contentLengthMismatch')
    default:
      break
  }
  if (err.validation) {
    const fields: Record<string, string> = {}
    for (const v of err.validation) {
      const name =
        (v.instancePath || '').replace(/^\//, '').replace(/\//g, '.') ||
        String((v.params as { missingProperty?: string })?.missingProperty ?? err.validationContext ?? 'body')
      fields[name] = v.message ?? 'is invalid'
    }
    return brokerError('invalidRequest', { part: err.validationContext, fields })
  }
  if (typeof err.statusCode === 'number' && err.statusCode >= 400 && err.statusCode < 500) {
    if (err.statusCode === 413) return brokerError('bodyTooLarge')
    if (err.statusCode === 415) return brokerError('unsupportedMediaType')
    return brokerError('badRequest', { message: err.message })
  }
  return brokerError('unexpected')
}

const OUTAGE_LOG_MS = 5000

/**
 * The store-unavailable warning, at most once per 5 s per worker with the count of 503s since the
 * last one: an outage under load answers thousands of requests, and a line each buried the log.
 */
function outageLog(): (log: FastifyBaseLogger) => void {
  let last = 0
  let since = 0
  return (log) => {
    since++
    const now = Date.now()
    if (now - last < OUTAGE_LOG_MS) return
    log.warn({ answered503: since }, 'flow store unavailable')
    last = now
    since = 0
  }
}

/**
 * One error handler for the whole server: `{code, message, …}` with the registry's status and the
 * security headers (set again: an error may come before the hook that sets them ran).
 */
export function installErrorHandling(app: FastifyInstance, headers: Readonly<Record<string, string>>): void {
  const storeDown = outageLog()
  app.setErrorHandler((err: FastifyError, request, reply) => {
    const broker = isBrokerError(err) ? err : fromFastify(err)
    if (broker.code === 'INTERNAL') request.log.error({ err }, 'unexpected error')
    else if (broker.code === 'STORE_UNAVAILABLE') storeDown(request.log)
    if (wantsHtmlPage(request, broker))
      void reply.code(broker.status).headers(headers).type('text/html; charset=utf-8').send(htmlErrorPage(broker))
    else void reply.code(broker.status).headers(headers).send(broker.toJSON())
  })
  app.setNotFoundHandler((request, reply) => {
    void reply
      .code(404)
      .headers(headers)
      .send(brokerError('noRoute', { method: request.method, path: request.url.split('?')[0]! }).toJSON())
  })
}

/**
 * Answers what Node's HTTP parser refuses before Fastify sees a request (a request not received
 * within server.requestTimeout, oversized headers, malformed HTTP) with the registry's error and the
 * security headers, then closes the socket.
 */
export function clientErrorHandler(
  headers: Readonly<Record<string, string>>,
  requestTimeoutMs: number,
): (err: Error & { code?: string }, socket: Socket) => void {
  const head = Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('')
  return (err, socket) => {
    if (err.code === 'ECONNRESET' || socket.destroyed) return
    const broker =
      err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? brokerError('requestTimeout', { ms: requestTimeoutMs })
        : err.code === 'HPE_HEADER_OVERFLOW'
          ? brokerError('headersTooLarge')
          : brokerError('badRequest', { message: 'The request is not valid HTTP.' })
    // An answer already under way on this socket cannot be followed by another.
    const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage
    if (socket.writable && !inFlight?.headersSent) {
      const body = JSON.stringify(broker.toJSON())
      socket.write(
        `HTTP/1.1 ${broker.status} ${STATUS_CODES[broker.status] ?? 'Error'}\r\n${head}` +
          `content-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
          `connection: close\r\n\r\n${body}`,
      )
    }
    socket.destroy()
  }
}
