import type { BrokerClient, StoredFlow } from '../broker-client.js'
import { brokerError } from '../../errors/index.js'
import { openInBrowser } from '../open-browser.js'
import type { Captured } from './capture.js'

export interface DeviceWaitOptions {
  /** Open the verification URI in the browser (unless --no-open). */
  open: boolean
  /** Lines for the user (stderr). */
  notify: (line: string) => void
  /** The live countdown, rewritten in place (stderr on a terminal); undefined to print nothing per second. */
  countdown?: (text: string | undefined) => void
}

/**
 * `broker store` for a device flow (RFC 8628): shows the user code and where to enter it, opens that
 * page, then polls the broker (POST /result {hash}) as often as it allows, counting down the time left,
 * until the tokens come, the user refuses (FAILED) or the code expires (CAPTURE_TIMEOUT).
 */
export async function awaitDevice(
  client: BrokerClient,
  stored: StoredFlow,
  opts: DeviceWaitOptions,
): Promise<Captured> {
  const where = stored.verification_uri_complete ?? stored.verification_uri ?? stored.url
  opts.notify(`Enter the code ${stored.user_code ?? '(none given)'} at ${stored.verification_uri ?? where}`)
  if (stored.verification_uri_complete) opts.notify(`or open ${stored.verification_uri_complete}`)
  if (opts.open) await openInBrowser(where, opts.notify)
  const deadline = Date.now() + stored.expires_in * 1000
  const tick = () => opts.countdown?.(`Waiting for you to sign in: ${clock(deadline - Date.now())} left`)
  tick()
  const timer = setInterval(tick, 1000)
  try {
    for (;;) {
      const answer = await client.poll(stored.hash)
      if ('result' in answer) return { delivery: 'poll', result: answer.result }
      const pause = answer.retryAfter * 1000
      if (Date.now() + pause > deadline) throw brokerError('deviceTimeout', { seconds: stored.expires_in })
      await new Promise((resolve) => setTimeout(resolve, pause))
    }
  } finally {
    clearInterval(timer)
    opts.countdown?.(undefined)
  }
}

/** m:ss of `ms` (never negative). */
export function clock(ms: number): string {
  const s = Math.max(0, Math.ceil(ms / 1000))
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`
}
