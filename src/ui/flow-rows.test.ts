import { describe, expect, it } from 'vitest'
import { mergeFlow } from '../broker/flow-log.js'
import { countdown, progressColor, secondsLeft, toRow } from './flow-rows.js'
import { flowEvent } from '../../test/helpers/ink.js'

describe('flow rows', () => {
  it('counts whole seconds up, never below zero', () => {
    expect(secondsLeft(10_500, 10_000)).toBe(1)
    expect(secondsLeft(12_000, 10_000)).toBe(2)
    expect(secondsLeft(9_000, 10_000)).toBe(0)
  })

  it('words every expired row one way: the last progress reached, then "expired" for the time left', () => {
    for (const [progress, shown] of [
      ['stored', 'stored'],
      ['awaiting_callback', 'awaiting callback'],
      ['completed', 'completed'],
      ['failed', 'failed'],
    ]) {
      const row = toRow(flowEvent({ progress, expiresAt: 1000 }), 5000)
      expect([row.progress, countdown(row)]).toEqual([shown, 'expired'])
      expect(row.expired).toBe(true)
    }
    const live = toRow(flowEvent({ progress: 'stored', expiresAt: 9000 }), 5000)
    expect([live.progress, countdown(live), live.expired]).toEqual(['stored', '4s', false])
  })

  it("greys out the progress of a flow that expired unfinished, keeps a finished one's colour", () => {
    expect(progressColor(toRow(flowEvent({ progress: 'stored', expiresAt: 1000 }), 5000))).toBe('gray')
    expect(progressColor(toRow(flowEvent({ progress: 'completed', expiresAt: 1000 }), 5000))).toBe('green')
    expect(progressColor(toRow(flowEvent({ progress: 'stored', expiresAt: 9000 }), 5000))).toBe('cyan')
  })

  it('shows a short hash', () => {
    expect(toRow(flowEvent(), Date.now()).short).toBe('AbCdEfGh')
  })

  it('spells progress with spaces', () => {
    expect(toRow(flowEvent({ progress: 'awaiting_callback' }), Date.now()).progress).toBe('awaiting callback')
  })

  it('merges events of one flow, keeping what a later event lacks', () => {
    const merged = mergeFlow(
      flowEvent({ provider: 'p.example', expiresAt: 99 }),
      flowEvent({
        type: 'failed',
        progress: 'failed',
        provider: undefined,
        expiresAt: undefined,
        error: 'PROVIDER_ERROR',
      }),
    )
    expect(merged).toMatchObject({
      type: 'failed',
      progress: 'failed',
      provider: 'p.example',
      expiresAt: 99,
      error: 'PROVIDER_ERROR',
    })
  })
})
