import type { Progress } from '../../broker/store/flow-store.js'
import { brokerError, isBrokerError } from '../../errors/index.js'
import type { BrokerClient } from '../broker-client.js'
import type { Captured } from './capture.js'

/** What awaitCapture watches: the listener, the broker's view of the flow, and where notices go. */
export interface CaptureWatch {
  /** The delivered result, or undefined when `ms` pass first; rejects when the delivery carried an error. */
  delivered(ms: number): Promise<Captured | undefined>
  /** The flow's progress and seconds left (/hash-check), or undefined when the broker no longer knows it. */
  check(): Promise<{ progress: Progress; expires_in: number } | undefined>
  notify(line: string): void
}

/** Seconds between looks at /hash-check: a start URL opened is noticed within this. */
const LOOK_EVERY = 10
/** Seconds a result may take to arrive once the broker says the flow ended. */
const ENDED_GRACE = 5

const ended = (p: Progress | undefined) => p === 'completed' || p === 'failed'

/**
 * Waits for the flow's result at the capture listener for as long as the flow lives: store.expire
 * until the start URL is opened, then store.callbackWait (a slow login, MFA). The broker is asked how
 * long that is (/hash-check) at least every 10 s; when the flow is gone, CAPTURE_TIMEOUT says what
 * happened: nobody opened the start URL, or the login never came back, or the flow ended at the
 * broker without its result arriving here.
 */
export async function awaitCapture(watch: CaptureWatch, flow: { expiresIn: number; port: number }): Promise<Captured> {
  let left = flow.expiresIn
  let progress: Progress = 'stored'
  let wasEnded = false
  for (;;) {
    // A grace second past the flow's end: a delivery sent at its last moment still counts.
    const wait = ended(progress) ? ENDED_GRACE : Math.min(left + 1, LOOK_EVERY)
    const got = await watch.delivered(wait * 1000)
    if (got) return got
    const state = await watch.check()
    if (!state || state.expires_in <= 0) {
      if (progress === 'stored') throw brokerError('captureTimeout', { seconds: flow.expiresIn, port: flow.port })
      if (ended(progress)) throw brokerError('captureNotDelivered', { progress, port: flow.port })
      throw brokerError('captureLoginTimeout', { port: flow.port })
    }
    if (ended(state.progress)) {
      if (wasEnded) throw brokerError('captureNotDelivered', { progress: state.progress, port: flow.port })
      wasEnded = true
    } else if (progress === 'stored' && state.progress !== 'stored') {
      watch.notify(
        `The start URL was opened: waiting up to ${state.expires_in} s for the login at the provider to finish (store.callbackWait).`,
      )
    }
    progress = state.progress
    left = state.expires_in
  }
}

/** The flow's progress and seconds left, as /hash-check says; undefined once the broker no longer knows it. */
export async function flowState(
  client: BrokerClient,
  hash: string,
): Promise<{ progress: Progress; expires_in: number } | undefined> {
  try {
    const { progress, expires_in } = await client.hashCheck(hash)
    return { progress, expires_in }
  } catch (err) {
    if (isBrokerError(err) && err.code === 'UNKNOWN_HASH') return undefined
    throw err
  }
}
