import { createServer } from 'node:net'

/** A free TCP port on 127.0.0.1, as the OS hands it out. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer()
    srv.once('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address()
      const port = typeof address === 'object' && address ? address.port : 0
      srv.close(() => resolve(port))
    })
  })
}

/** Polls `check` until it resolves truthy or `ms` passes. */
export async function waitFor<T>(
  check: () => Promise<T | undefined | false>,
  ms = 10_000,
  what = 'condition',
): Promise<T> {
  const until = Date.now() + ms
  let lastErr: unknown
  while (Date.now() < until) {
    try {
      const v = await check()
      if (v) return v
    } catch (err) {
      lastErr = err
    }
    await new Promise((r) => setTimeout(r, 50))
  }
  throw new Error(`timed out waiting for ${what}${lastErr ? `: ${(lastErr as Error).message}` : ''}`)
}
