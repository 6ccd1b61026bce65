import { describe, expect, it } from 'vitest'
import { mergeFlow } from '../broker/flow-log.js'
import { countdown, secondsLeft, toRow } from './flow-rows.js'
import { flowEvent } from '../../test/helpers/ink.js'

describe('flow rows', () => {
  it('counts whole seconds up, never below zero', () => {
    expect(secondsLeft(10_500, 10_000)).toBe(1)
    expect(secondsLeft(12_000, 10_000)).toBe(2)
    expect(secondsLeft(9_000, 10_000)).toBe(0)
  })

  it('reads "expired" once an unfinished flow ran out of time', () => {
    const row = toRow(flowEvent({ progress: 'awaiting_callback', expiresAt: 1000 }), 5000)
    expect(row.progress).toBe('expired')
    expect(countdown(row)).toBe('expired')
  })

  it('keeps the progress of a finished flow past its expiry, and shows a short hash', () => {
    const row = toRow(flowEvent({ progress: 'completed', expiresAt: 1000 }), 5000)
    expect(row.progress).toBe('completed')
    expect(row.short).toBe('AbCdEfGh')
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
