import formbody from '@fastify/formbody'
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify'
import type { BrokerDeps } from '../deps.js'
import { brokerError } from '../../errors/index.js'
import { clientErrorHandler, installErrorHandling } from './errors.js'
import { noSchemaCompilers } from './fields.js'
import { parseForm } from './form.js'
import { installJsonDepthLimit, securityHeaders } from './security.js'
import { flowRoutes } from './routes/flows.js'
import { signRoutes } from './routes/sign.js'

// Servers whose /ping already says they are going away (see beginDrain).
const leaving = new WeakSet<FastifyInstance>()

/**
 * The first step of a drain: /ping answers 503 from now on, so a load balancer stops sending new
 * connections, while every other request is still served until close().
 */
export function beginDrain(app: FastifyInstance): void {
  leaving.add(app)
}

/** Builds the broker's HTTP server; it never listens (`serve` does, tests use `inject`). */
export async function buildServer(deps: BrokerDeps): Promise<FastifyInstance> {
  const { server } = deps.config
  const headers = securityHeaders(deps.config.protocol)
  const app = Fastify({
    loggerInstance: deps.log as FastifyBaseLogger,
    // Request URLs carry hashes and codes: the default per-request log lines would leak them.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: deps.config.body.limit,
    // While closing, the onRequest hook below answers 503 through the registry instead.
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    // A client that trickles its headers or body is cut off (408) instead of holding a socket forever.
    requestTimeout: server.requestTimeout,
    keepAliveTimeout: server.keepAliveTimeout,
    http: {
      headersTimeout: server.headersTimeout,
      requestTimeout: server.requestTimeout,
      // Node checks for expired requests on this period (30 s by default): the limit holds to within it.
      connectionsCheckingInterval: Math.min(1000, server.headersTimeout),
    },
    clientErrorHandler: clientErrorHandler(headers, server.requestTimeout),
    routerOptions: { maxParamLength: 256 },
    // Routes check their few fields themselves (fields.ts): no Ajv or fast-json-stringify in a worker.
    schemaController: noSchemaCompilers,
    // A child logger per request (for its request id) cost more than a request's own work in the
    // bench's CPU profile; ids are worth it only when requests are logged, at debug.
    ...(deps.log.isLevelEnabled('debug') ? {} : { childLoggerFactory: (logger: FastifyBaseLogger) => logger }),
  })
  app.server.maxConnections = server.maxConnections
  installErrorHandling(app, headers)
  installJsonDepthLimit(app)
  // Bodies are JSON or forms. Fastify's default text/plain parser handed /store a string, refused as a
  // malformed record (400) where any other type is 415: text/plain is 415 with them.
  app.removeContentTypeParser('text/plain')
  // Forms are parsed as formbody's default parser does, with V8's decoder (form.ts).
  await app.register(formbody, { bodyLimit: deps.config.body.limit, parser: parseForm })
  // While draining, answers to requests in flight close their keep-alive connection, so close() ends.
  let draining = false
  // Callback-style hooks: these run on every request, and an async hook costs a promise each time.
  app.addHook('onRequest', (_request, reply, done) => {
    reply.headers(headers)
    done(draining ? brokerError('shuttingDown') : undefined)
  })
  app.addHook('preClose', async () => {
    draining = true
  })
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (draining) reply.header('connection', 'close')
    done(null, payload)
  })
  if (deps.log.isLevelEnabled('debug')) {
    app.addHook('onResponse', async (request, reply) => {
      // The path only: query strings carry hashes, states and codes.
      request.log.debug(
        {
          method: request.method,
          path: request.url.split('?')[0],
          status: reply.statusCode,
          ms: Math.round(reply.elapsedTime),
        },
        'request',
      )
    })
  }
  app.get('/ping', async () => {
    if (leaving.has(app)) throw brokerError('shuttingDown')
    return { ping: 'pong' }
  })
  await app.register(flowRoutes, { deps })
  await app.register(signRoutes, { deps })
  if (deps.config.admin?.key) await app.register(import('./routes/admin.js'), { deps })
  return app
}
