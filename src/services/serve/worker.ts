import { beginDrain, buildServer } from '../../broker/http/build.js'
import { createBroker } from '../../broker/index.js'
import { drainDelayMs } from '../../config/runtime.js'
import type { WorkerMessage, WorkerSetup } from './setup.js'

/**
 * A worker: builds the server, listens, and drains on the primary's word. `collect`, a full garbage
 * collection, runs once, SETTLE_MS after it listens: loading the modules grew V8's young generation to
 * about 16 MB of pages, nearly all garbage, and V8 gives them back only at a full collection made while
 * allocation is slow, of its own choosing (in the bench, one worker of two still held them 15 s after
 * start). Under load by then, the collection costs one pause and V8 rightly keeps the pages.
 * docs/decisions/0012.
 */
const SETTLE_MS = 5000

export async function runWorker(setup: WorkerSetup, collect?: () => void): Promise<void> {
  const send = (msg: WorkerMessage) => process.send?.(msg)
  // The primary coordinates shutdown; a Ctrl-C reaching the whole process group must not kill a worker first.
  process.on('SIGINT', () => {})
  // Listen for the primary's word before the slow start-up: a shutdown sent while this worker
  // is still starting must not be lost (the worker would then serve on until it is killed).
  let close: (() => Promise<void>) | undefined
  let stopRequested = false
  const requestStop = () => {
    stopRequested = true
    void close?.()
  }
  process.on('SIGTERM', requestStop)
  process.on('disconnect', requestStop)
  process.on('message', (msg: { type?: string }) => {
    if (msg?.type === 'shutdown') requestStop()
  })
  try {
    const broker = await createBroker(setup.config, setup.driver, {
      cwd: setup.cwd,
      connectionName: setup.connectionName,
    })
    const app = await buildServer(broker)
    let closing: Promise<void> | undefined
    let listening = false
    close = () =>
      (closing ??= (async () => {
        // Connections the kernel accepted but no worker has taken yet would be reset by close():
        // say we are leaving on /ping first, and keep serving while a load balancer notices.
        beginDrain(app)
        const delay = drainDelayMs(setup.config)
        if (listening && delay > 0) await new Promise((r) => setTimeout(r, delay))
        await app.close()
        await broker.close()
        process.exit(0)
      })())
    if (stopRequested) return void (await close())
    await app.listen({ port: setup.config.port, host: setup.config.listen })
    listening = true
    if (stopRequested) return void (await close())
    if (collect) setTimeout(collect, SETTLE_MS).unref()
    const address = app.server.address()
    send({ type: 'ready', port: typeof address === 'object' && address ? address.port : setup.config.port })
  } catch (err) {
    const e = err as Error & { code?: string }
    send({ type: 'fatal', code: e.code ?? 'FAILED', message: e.message })
    process.exit(1)
  }
}
