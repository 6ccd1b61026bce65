import type { FastifyError, FastifyInstance } from 'fastify'
import { brokerError, BrokerError, isBrokerError } from '../../errors.js'

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

/** One error handler for the whole server: `{code, message, …}` with the registry's status. */
export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError, request, reply) => {
    const broker = isBrokerError(err) ? err : fromFastify(err)
    if (broker.code === 'INTERNAL') request.log.error({ err }, 'unexpected error')
    else if (broker.code === 'STORE_UNAVAILABLE') request.log.warn('flow store unavailable')
    void reply.code(broker.status).header('cache-control', 'no-store').send(broker.toJSON())
  })
  app.setNotFoundHandler((request, reply) => {
    void reply
      .code(404)
      .send(brokerError('noRoute', { method: request.method, path: request.url.split('?')[0] }).toJSON())
  })
}
