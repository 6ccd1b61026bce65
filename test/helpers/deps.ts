import type { FastifyInstance } from 'fastify'
import { afterEach } from 'vitest'
import { configSchema, type ConfigInput } from '../../src/config/schema.js'
import { type Broker, createBroker } from '../../src/broker/index.js'
import { buildServer } from '../../src/broker/http/build.js'
import { resolveSecrets } from '../../src/services/serve/secrets.js'

/** A broker wired to the embedded store, for route tests with `inject`. */
export async function memoryBroker(input: ConfigInput = {}): Promise<Broker> {
  const parsed = configSchema.parse({ log: { level: 'silent' }, ...input })
  return createBroker(resolveSecrets(parsed).config, 'memory')
}

/** A broker on the embedded store with its HTTP server (never listening: tests `inject`). */
export interface RouteServer {
  app: FastifyInstance
  broker: Broker
}

/**
 * For a file of route tests: call once at its top; the function it gives starts a RouteServer,
 * and every server a test started is closed after that test.
 */
export function routeServers(): (input?: ConfigInput) => Promise<RouteServer> {
  const started: RouteServer[] = []
  afterEach(async () => {
    for (const { app, broker } of started.splice(0)) {
      await app.close()
      await broker.close()
    }
  })
  return async (input = {}) => {
    const broker = await memoryBroker(input)
    const server = { app: await buildServer(broker), broker }
    started.push(server)
    return server
  }
}
