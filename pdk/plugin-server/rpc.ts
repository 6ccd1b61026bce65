/**
 * Kong's end of MessagePack-RPC to a plugin server (`mp_rpc.lua`): requests `[0, id, method, args]`,
 * responses `[1, id, error, result]`, notifications `[2, label, args]`, over a Unix socket.
 */
import { connect, type Socket } from 'node:net'
import type { Encoder } from '@msgpack/msgpack'

/** The server answered a call with an error (its text is the message). */
export class RpcError extends Error {}

/** No answer within the time allowed. */
export class RpcTimeout extends Error {}

interface Pending {
  resolve: (v: unknown) => void
  reject: (e: Error) => void
  timer: NodeJS.Timeout
}

// Loaded with the first connection: a run without a plugin server never needs MessagePack (~50 ms).
let msgpack: { decodeMultiStream: typeof import('@msgpack/msgpack').decodeMultiStream; encoder: Encoder } | undefined
async function loadMsgpack(): Promise<NonNullable<typeof msgpack>> {
  const { decodeMultiStream, Encoder } = await import('@msgpack/msgpack')
  // Lua tables have no undefined: a missing Data is absent from the map, not nil
  return (msgpack ??= { decodeMultiStream, encoder: new Encoder(undefined, undefined, 100, 2048, false, false, true) })
}

/** One connection; calls are sent one after another, as the kong-js-pluginserver reads one message per chunk. */
export class RpcConnection {
  private msgId = 0
  private readonly pending = new Map<number, Pending>()
  private closed: Error | undefined

  private constructor(private readonly socket: Socket) {
    void this.read()
    socket.on('error', (e) => this.fail(e))
    socket.on('close', () => this.fail(new Error('the plugin server closed the connection')))
  }

  /** Connects to the socket at `path`. */
  static async open(path: string, timeoutMs: number): Promise<RpcConnection> {
    await loadMsgpack()
    return new Promise((resolve, reject) => {
      const socket = connect(path)
      const timer = setTimeout(() => {
        socket.destroy()
        reject(new RpcTimeout(`no connection to the plugin server within ${timeoutMs} ms`))
      }, timeoutMs)
      socket.once('error', (e) => {
        clearTimeout(timer)
        reject(e)
      })
      socket.once('connect', () => {
        clearTimeout(timer)
        socket.removeAllListeners('error')
        resolve(new RpcConnection(socket))
      })
    })
  }

  get alive(): boolean {
    return this.closed === undefined
  }

  private async read(): Promise<void> {
    try {
      for await (const msg of msgpack!.decodeMultiStream(this.socket)) {
        if (!Array.isArray(msg)) continue
        // notifications (serverPid) change nothing for one emulated worker
        if (msg[0] !== 1) continue
        const p = this.pending.get(msg[1] as number)
        if (!p) continue
        this.pending.delete(msg[1] as number)
        clearTimeout(p.timer)
        if (msg[2] !== null && msg[2] !== undefined) p.reject(new RpcError(String(msg[2])))
        else p.resolve(msg[3] ?? undefined)
      }
    } catch (e) {
      this.fail(e as Error)
    }
  }

  private fail(e: Error): void {
    this.closed ??= e
    for (const p of this.pending.values()) {
      clearTimeout(p.timer)
      p.reject(e)
    }
    this.pending.clear()
    this.socket.destroy()
  }

  /** Calls `method` with `args`; rejects with RpcError, RpcTimeout, or the connection's failure. */
  call(method: string, args: unknown[], timeoutMs: number): Promise<unknown> {
    if (this.closed) return Promise.reject(this.closed)
    const id = ++this.msgId
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id)
        reject(new RpcTimeout(`${method} got no answer within ${timeoutMs} ms`))
      }, timeoutMs)
      this.pending.set(id, { resolve, reject, timer })
      this.socket.write(msgpack!.encoder.encode([0, id, method, args]))
    })
  }

  close(): void {
    this.fail(new Error('closed'))
  }
}
