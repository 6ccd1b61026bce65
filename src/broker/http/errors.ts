import type { FastifyError, FastifyInstance } from 'fastify'
import { BrokerError, isBrokerError } from '../../errors.js'

/** Maps Fastify's own errors to the registry's codes; nothing else reaches a client. */
function fromFastify(err: FastifyError): BrokerError {
  switch (err.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new BrokerError('BODY_TOO_LARGE', 'The request body is larger than this broker accepts.')
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new BrokerError(
        'UNSUPPORTED_MEDIA_TYPE',
        `Unsupported content type; send application/json or application/x-www-form-urlencoded.`,
      )
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new BrokerError('VALIDATION', 'The body is not valid JSON.', { fields: {} })
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new BrokerError('VALIDATION', 'The Content-Length header does not match the body.', { fields: {} })
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
    return new BrokerError(
      'VALIDATION',
      `Invalid ${err.validationContext ?? 'request'}: ${Object.entries(fields)
        .map(([k, v]) => `${k} ${v}`)
        .join('; ')}.`,
      { fields },
    )
  }
  if (typeof err.statusCode === 'number' && err.statusCode >= 400 && err.statusCode < 500) {
    return new BrokerError(
      err.statusCode === 413 ? 'BODY_TOO_LARGE' : err.statusCode === 415 ? 'UNSUPPORTED_MEDIA_TYPE' : 'VALIDATION',
      err.message,
      { fields: {} },
    )
  }
  return new BrokerError('INTERNAL', 'The broker failed unexpectedly; the error was logged.')
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
      .send(new BrokerError('NOT_FOUND', `No route ${request.method} ${request.url.split('?')[0]}.`).toJSON())
  })
}
