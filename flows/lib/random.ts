import { randomBytes } from 'node:crypto'

// CSPRNG bytes fetched 8 KiB at a time: a randomBytes call per id, state or PKCE verifier was a
// measurable share of /store and /start in the bench's CPU profile. Each byte is handed out once
// (what Node's own randomUUID cache does).
const POOL_BYTES = 8192
let pool = Buffer.alloc(0)
let offset = 0

/** `n` fresh bytes from the CSPRNG (n ≤ 8192), taken from a pool; the caller must not keep the buffer past use. */
export function randomPool(n: number): Buffer {
  if (offset + n > pool.length) {
    pool = randomBytes(POOL_BYTES)
    offset = 0
  }
  const bytes = pool.subarray(offset, offset + n)
  offset += n
  return bytes
}
