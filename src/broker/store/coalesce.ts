import { Socket } from 'node:net'
import type { Redis } from 'ioredis'

/**
 * The socket under an ioredis client: the one place that reads ioredis's `stream`, a property its
 * typings mark `@ignore` (no public API hands out the socket). coalesce.test.ts pins it against a
 * real Redis, so an ioredis upgrade that renames it fails a test instead of silently turning
 * coalescing off. Undefined for a client without a socket of its own (Cluster, the embedded store).
 */
export function socketOf(client: Redis): Socket | undefined {
  const stream = (client as { stream?: unknown }).stream
  return stream instanceof Socket ? stream : undefined
}

/**
 * Holds the Redis socket's writes until this event-loop turn ends, then sends them as one write.
 * Under load many requests reach the store in one turn, and a write (a syscall) per command was the
 * largest cost in the bench's CPU profile. ioredis's auto-pipelining batches too, but it keeps one
 * batch in flight at a time: the requests queued behind it lived long enough to be promoted out of
 * the young generation (scavenges five times longer, a full GC every few seconds, and 27% more
 * instructions per /store under callgrind, most of them in the GC's threads). Without a socket
 * (see socketOf) commands go out as ioredis sends them: slower, never wrong.
 */
export function coalesceTurn(client: Redis): void {
  const socket = socketOf(client)
  if (!socket || socket.writableCorked) return
  socket.cork()
  setImmediate(uncork, socket)
}
const uncork = (socket: Socket) => socket.uncork()
