import type { OutgoingHttpHeaders, ServerResponse } from 'node:http'
import type { FastifyInstance } from 'fastify'
import type { FlowEvent } from '../../events.js'
import { brokerError } from '../../../errors/index.js'
import type { BrokerDeps } from '../../deps.js'
import { FlowLog } from '../../flow-log.js'
import { bearerCheck } from '../security.js'

/** Seconds between SSE comments, so proxies keep an idle stream open. */
const PING_MS = 15_000
/**
 * What an event stream may hold unsent: a client that stops reading (a suspended laptop, a hostile
 * one) is cut off past it rather than growing the worker's memory with every flow; a dashboard that
 * reconnects reads the recent flows again from /admin/flows.
 */
export const MAX_UNSENT_BYTES = 1_048_576

/**
 * The admin API the dashboard attaches to (`broker dashboard --attach`): GET /admin/flows (the
 * recent flows, as flow events: no record, no secret) and GET /admin/events (a server-sent event
 * stream of flow events). Registered only when admin.key is set; every request needs the key.
 */
export default async function adminRoutes(app: FastifyInstance, { deps }: { deps: BrokerDeps }): Promise<void> {
  const key = deps.config.admin?.key
  if (!key) return
  const check = bearerCheck([key])
  // Events are per process: with several workers each answers for its own flows.
  const log = new FlowLog()
  const streams = new Set<ServerResponse>()
  const onFlow = (event: FlowEvent) => {
    log.add(event)
    const frame = `event: flow\ndata: ${JSON.stringify(event)}\n\n`
    for (const res of streams) send(res, frame)
  }
  const send = (res: ServerResponse, text: string) => {
    if (res.writableLength <= MAX_UNSENT_BYTES) res.write(text)
    else {
      streams.delete(res)
      res.destroy()
    }
  }
  deps.events.on('flow', onFlow)
  // Other workers' and instances' events must reach this one before it serves an attached dashboard.
  await deps.events.subscribed
  app.addHook('preClose', async () => {
    // Open streams are never idle: end them, or closing would wait for the clients.
    for (const res of streams) res.end()
    streams.clear()
  })
  app.addHook('onClose', async () => void deps.events.off('flow', onFlow))
  app.addHook('onRequest', async (request) => {
    if (check(request.headers.authorization) !== 'ok') {
      throw brokerError('adminKeyRequired')
    }
  })

  app.get('/admin/flows', async () => ({ flows: log.snapshot() }))

  app.get('/admin/events', async (request, reply) => {
    reply.hijack()
    const res = reply.raw
    // Hijacked: the security headers the reply holds (build.ts) are written here, or the stream has none.
    res.writeHead(200, {
      ...(reply.getHeaders() as OutgoingHttpHeaders),
      'content-type': 'text/event-stream',
      'cache-control': 'no-store',
      connection: 'keep-alive',
    })
    res.write(': flow events\n\n')
    streams.add(res)
    const ping = setInterval(() => send(res, ': ping\n\n'), PING_MS)
    ping.unref()
    request.raw.once('close', () => {
      clearInterval(ping)
      streams.delete(res)
    })
  })
}
