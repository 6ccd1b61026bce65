import { brokerError, isBrokerError } from '../../errors/index.js'
import { BrokerClient, type HashCheck } from '../broker-client.js'

export type { HashCheck }

export interface HashCheckOptions {
  broker: string
  hash: string
  /** Poll every second until the flow completes, fails or expires; each answer goes to `onTick`. */
  watch?: boolean
  onTick?: (answer: HashCheck) => void
  intervalMs?: number
}

const FINAL = new Set(['completed', 'failed'])

/** `broker hash-check`: the stored record (secrets redacted by the broker), its plugin, progress and time left. */
export async function hashCheck(opts: HashCheckOptions): Promise<HashCheck> {
  if (!opts.hash.trim()) throw brokerError('hashCheckNeedsHash')
  const client = new BrokerClient(opts.broker)
  let answer = await client.hashCheck(opts.hash.trim())
  if (!opts.watch) return answer
  opts.onTick?.(answer)
  while (!FINAL.has(answer.progress) && answer.expires_in > 0) {
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 1000))
    try {
      answer = await client.hashCheck(opts.hash.trim())
    } catch (err) {
      // The record expired while we watched: the last answer stands, at zero seconds.
      if (isBrokerError(err) && err.code === 'UNKNOWN_HASH') return { ...answer, expires_in: 0 }
      throw err
    }
    opts.onTick?.(answer)
  }
  return answer
}
