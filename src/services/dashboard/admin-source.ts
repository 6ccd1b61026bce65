import type { FlowEvent } from '../../broker/events.js'
import { brokerError } from '../../errors/index.js'
import type { FlowEventSource, FlowListener } from './source.js'

const RECONNECT_MS = 1000

/** Checks that `url` has an admin API that takes `key`; a one-line usage error when not. */
export async function checkAdmin(url: string, key: string): Promise<void> {
  let res: Response
  try {
    res = await fetch(`${url}/admin/flows`, {
      headers: { authorization: `Bearer ${key}` },
      signal: AbortSignal.timeout(10_000),
    })
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause?.code ?? (err as Error).name
    throw brokerError('brokerUnreachable', { url, cause })
  }
  await res.arrayBuffer().catch(() => undefined)
  if (res.status === 404) throw brokerError('noAdminApi', { url })
  if (res.status === 401) throw brokerError('adminKeyRefused', { url })
  if (!res.ok) throw brokerError('adminAnswered', { url, status: res.status })
}

/** Flow events of a running broker, over its admin API: a snapshot, then a server-sent event stream. */
export function adminEventSource(url: string, key: string): FlowEventSource {
  const headers = { authorization: `Bearer ${key}` }
  const listeners = new Set<FlowListener>()
  let abort: AbortController | undefined
  let closed = false

  const emit = (event: FlowEvent) => {
    for (const listener of listeners) listener(event)
  }
  const connect = async () => {
    while (!closed && listeners.size) {
      abort = new AbortController()
      try {
        const res = await fetch(`${url}/admin/events`, { headers, signal: abort.signal })
        if (!res.ok || !res.body) throw new Error(`GET /admin/events answered ${res.status}`)
        await readEvents(res.body, emit)
      } catch {
        // The broker went away or restarted: try again shortly, while someone listens.
      }
      if (!closed) await new Promise((r) => setTimeout(r, RECONNECT_MS).unref())
    }
  }

  return {
    async snapshot() {
      const res = await fetch(`${url}/admin/flows`, { headers, signal: AbortSignal.timeout(10_000) })
      if (!res.ok) throw new Error(`GET /admin/flows answered ${res.status}`)
      return ((await res.json()) as { flows: FlowEvent[] }).flows
    },
    subscribe(listener) {
      listeners.add(listener)
      if (listeners.size === 1) void connect()
    },
    unsubscribe(listener) {
      listeners.delete(listener)
      if (!listeners.size) abort?.abort()
    },
    close() {
      closed = true
      listeners.clear()
      abort?.abort()
    },
  }
}

/** Reads `event: flow` frames of a server-sent event stream until it ends. */
export async function readEvents(body: ReadableStream<Uint8Array>, emit: (event: FlowEvent) => void): Promise<void> {
  const decoder = new TextDecoder()
  let buffer = ''
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true })
    let end: number
    while ((end = buffer.indexOf('\n\n')) !== -1) {
      const frame = buffer.slice(0, end)
      buffer = buffer.slice(end + 2)
      const data = frame
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).trimStart())
        .join('\n')
      if (!data || !/^event: ?flow$/m.test(frame)) continue
      try {
        emit(JSON.parse(data) as FlowEvent)
      } catch {
        // a frame that is not JSON is skipped, not fatal
      }
    }
  }
}
