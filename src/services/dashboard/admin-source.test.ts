import { afterEach, describe, expect, it } from 'vitest'
import { memoryBroker } from '../../../test/helpers/deps.js'
import type { FlowEvent } from '../../broker/events.js'
import { buildServer } from '../../broker/http/build.js'
import type { Broker } from '../../broker/index.js'
import { adminEventSource, checkAdmin, readEvents } from './admin-source.js'

const KEY = 'admin-key-0123456789'
let close: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const c of close.reverse()) await c()
  close = []
})

function stream(...chunks: string[]): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      for (const c of chunks) controller.enqueue(new TextEncoder().encode(c))
      controller.close()
    },
  })
}

async function listening(key?: string): Promise<{ url: string; broker: Broker }> {
  const broker = await memoryBroker(key ? { admin: { key } } : {})
  const app = await buildServer(broker)
  await app.listen({ port: 0, host: '127.0.0.1' })
  close.push(
    () => broker.close(),
    () => app.close(),
  )
  return { url: `http://127.0.0.1:${(app.server.address() as { port: number }).port}`, broker }
}

describe('admin event source', () => {
  it('reads flow frames split across chunks, skipping comments and other events', async () => {
    const got: FlowEvent[] = []
    await readEvents(
      stream(
        ': hello\n\n',
        'event: flow\ndata: {"hash":"a"',
        ',"type":"stored"}\n\nevent: other\ndata: {}\n\n',
        'event: flow\ndata: {"hash":"b"}\n\n',
      ),
      (e) => got.push(e),
    )
    expect(got.map((e) => e.hash)).toEqual(['a', 'b'])
  })

  it('gives the snapshot, then events as the broker publishes them', async () => {
    const { url, broker } = await listening(KEY)
    broker.events.publish({ type: 'stored', hash: 'before', plugin: 'p', progress: 'stored' })
    const source = adminEventSource(url, KEY)
    close.push(async () => source.close())
    expect((await source.snapshot()).map((e) => e.hash)).toEqual(['before'])
    const got: string[] = []
    source.subscribe((e) => got.push(e.hash))
    // The stream connects asynchronously: publish until the event comes through.
    await expect
      .poll(
        () => (
          broker.events.publish({ type: 'started', hash: 'live', plugin: 'p', progress: 'started' }),
          got.includes('live')
        ),
        { timeout: 5000 },
      )
      .toBe(true)
  })

  it('says in one line when there is no admin API, or the key is refused', async () => {
    const off = await listening()
    await expect(checkAdmin(off.url, KEY)).rejects.toThrow(/has no admin API: start it with --admin-key/)
    const on = await listening(KEY)
    await expect(checkAdmin(on.url, 'wrong-key-0123456789')).rejects.toThrow(/refused the admin key/)
    await expect(checkAdmin(on.url, KEY)).resolves.toBeUndefined()
  })
})
