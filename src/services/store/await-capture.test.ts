import { describe, expect, it } from 'vitest'
import { BrokerError, brokerError } from '../../errors/index.js'
import type { Progress } from '../../broker/store/flow-store.js'
import { awaitCapture, type CaptureWatch } from './await-capture.js'
import type { Captured } from './capture.js'

const RESULT: Captured = { delivery: 'code', result: { access_token: 'at' } }

/**
 * A watch on a scripted flow: each look at /hash-check takes the next answer (undefined: the broker
 * no longer knows the hash), and the result arrives after `deliverAfter` looks. No time passes:
 * `delivered` answers at once, recording how long it was asked to wait.
 */
function scripted(answers: Array<{ progress: Progress; expires_in: number } | undefined>, deliverAfter = Infinity) {
  const waits: number[] = []
  const notices: string[] = []
  let looks = 0
  const watch: CaptureWatch = {
    delivered: async (ms) => {
      waits.push(ms)
      return looks >= deliverAfter ? RESULT : undefined
    },
    check: async () => {
      if (looks >= answers.length) throw new Error('looked once too often')
      return answers[looks++]
    },
    notify: (line) => notices.push(line),
  }
  return { watch, waits, notices, looks: () => looks }
}

const failure = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error('expected a failure')
    },
    (e: BrokerError) => e,
  )

describe('awaitCapture', () => {
  it('keeps waiting past store.expire while the flow lives once the start URL was opened (store.callbackWait)', async () => {
    const s = scripted(
      [
        { progress: 'stored', expires_in: 10 },
        { progress: 'awaiting_callback', expires_in: 552 },
        { progress: 'awaiting_callback', expires_in: 540 },
      ],
      3,
    )
    await expect(awaitCapture(s.watch, { expiresIn: 20, port: 4321 })).resolves.toBe(RESULT)
    expect(s.looks()).toBe(3)
    expect(s.notices).toEqual([
      'The start URL was opened: waiting up to 552 s for the login at the provider to finish (store.callbackWait).',
    ])
    // Never longer between looks than the flow has left (and a grace second), never longer than 10 s.
    expect(s.waits).toEqual([10_000, 10_000, 10_000, 10_000])
  })

  it('says nobody opened the start URL when the flow expired unstarted', async () => {
    const s = scripted([{ progress: 'stored', expires_in: 1 }, undefined])
    const err = await failure(awaitCapture(s.watch, { expiresIn: 11, port: 4321 }))
    expect(err.code).toBe('CAPTURE_TIMEOUT')
    expect(err.message).toBe(
      "Nobody opened the start URL within 11 s, the stored record's lifetime (store.expire): nothing reached http://127.0.0.1:4321/callback.",
    )
    expect(err.next).toMatch(/Open the start URL sooner/)
    expect(s.waits).toEqual([10_000, 2_000])
  })

  it('says the login did not finish when the flow expired after the start URL was opened', async () => {
    const s = scripted([{ progress: 'awaiting_callback', expires_in: 3 }, undefined])
    const err = await failure(awaitCapture(s.watch, { expiresIn: 60, port: 4321 }))
    expect(err.code).toBe('CAPTURE_TIMEOUT')
    expect(err.message).toBe(
      'The start URL was opened, but the login at the provider did not come back before the flow expired (store.callbackWait): nothing reached http://127.0.0.1:4321/callback.',
    )
    expect(err.next).toMatch(/store\.callbackWait/)
    expect(err.next).not.toMatch(/sooner \(or use --open\)/)
  })

  it('says the flow ended at the broker when it did, yet nothing arrived', async () => {
    const s = scripted([
      { progress: 'completed', expires_in: 30 },
      { progress: 'completed', expires_in: 25 },
    ])
    const err = await failure(awaitCapture(s.watch, { expiresIn: 60, port: 4321 }))
    expect(err.message).toBe(
      'The flow ended at the broker (completed), but nothing reached http://127.0.0.1:4321/callback.',
    )
  })

  it("passes on the broker's other errors, and a failed delivery", async () => {
    const down = scripted([])
    down.watch.check = async () => {
      throw brokerError('brokerUnreachable', { url: 'http://localhost:3000', cause: 'ECONNREFUSED' })
    }
    expect((await failure(awaitCapture(down.watch, { expiresIn: 60, port: 1 }))).code).toBe('BROKER_UNREACHABLE')
  })
})
