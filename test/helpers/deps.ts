import type { FastifyInstance } from 'fastify'
import { afterEach, beforeEach, vi } from 'vitest'
import { configSchema, type ConfigInput } from '../../src/config/schema.js'
import type { FlowEvent } from '../../src/broker/events.js'
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

/**
 * For a file of broker tests: before each test a new broker on the embedded store, handed to `take`
 * with the list its flow events are collected into; after it, real timers back and the broker closed.
 */
export function brokerPerTest(input: ConfigInput, take: (broker: Broker, events: FlowEvent[]) => void): void {
  let broker: Broker | undefined
  beforeEach(async () => {
    broker = await memoryBroker(input)
    const events: FlowEvent[] = []
    broker.events.on('flow', (e) => events.push(e))
    take(broker, events)
  })
  afterEach(async () => {
    vi.useRealTimers()
    await broker?.close()
  })
}
