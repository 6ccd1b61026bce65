import { createServer, type Server, Socket } from 'node:net'

/**
 * A loopback TCP proxy in front of a Redis that injects the faults a network and a dying server
 * cause: a command carried out whose reply is lost (the connection cut instead of the answer coming
 * back), and, in chaos mode, every `n`th reply lost that way. Connections made after a cut pass
 * through as normal, as a Redis that came back would.
 */
export interface FaultProxy {
  port: number
  /** Lose the reply to the next command sent through the proxy, once. */
  loseNextReply(): void
  /** Lose every `n`th reply from now on (0: none). */
  chaos(n: number): void
  /** Replies lost so far. */
  readonly cuts: number
  close(): void
}

export async function startFaultProxy(target: number): Promise<FaultProxy> {
  let loseNext = false
  let every = 0
  let seen = 0
  let cuts = 0
  const sockets = new Set<Socket>()
  const server: Server = createServer((inbound) => {
    const upstream = new Socket()
    upstream.connect(target, '127.0.0.1')
    sockets.add(inbound).add(upstream)
    let dropReply = false
    inbound.on('data', (chunk) => {
      if (loseNext) {
        loseNext = false
        dropReply = true
      }
      upstream.write(chunk)
    })
    upstream.on('data', (chunk) => {
      seen++
      if (dropReply || (every > 0 && seen % every === 0)) {
        dropReply = false
        cuts++
        inbound.destroy()
        upstream.destroy()
      } else inbound.write(chunk)
    })
    for (const s of [inbound, upstream]) {
      s.on('error', () => undefined)
      s.on('close', () => {
        inbound.destroy()
        upstream.destroy()
        sockets.delete(s)
      })
    }
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    port: (server.address() as { port: number }).port,
    loseNextReply: () => void (loseNext = true),
    chaos: (n) => void (every = n),
    get cuts() {
      return cuts
    },
    close: () => {
      for (const s of sockets) s.destroy()
      server.close()
    },
  }
}
