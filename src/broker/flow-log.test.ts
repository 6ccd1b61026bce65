import { describe, expect, it } from 'vitest'
import type { FlowEvent } from './events.js'
import { FlowLog, mergeFlow } from './flow-log.js'

const ev = (hash: string, over: Partial<FlowEvent> = {}): FlowEvent => ({
  type: 'stored',
  hash,
  plugin: 'p',
  progress: 'stored',
  at: Date.now(),
  expiresAt: Date.now() + 60_000,
  ...over,
})

describe('FlowLog', () => {
  it('keeps the latest state of each flow, in the order the flows were first seen (created)', () => {
    const log = new FlowLog()
    log.add(ev('a', { provider: 'idp.example' }))
    log.add(ev('b'))
    log.add(ev('a', { type: 'started', progress: 'started', provider: undefined }))
    expect(log.snapshot().map((f) => [f.hash, f.progress, f.provider])).toEqual([
      ['a', 'started', 'idp.example'],
      ['b', 'stored', undefined],
    ])
  })

  it('puts the flows seen since a snapshot after it, a flow in both at its snapshot place', () => {
    const log = new FlowLog()
    log.add(ev('known', { type: 'started', progress: 'started' }))
    log.add(ev('new'))
    log.addOlder([ev('old'), ev('known'), ev('older-still-listed')])
    expect(log.snapshot().map((f) => [f.hash, f.progress])).toEqual([
      ['old', 'stored'],
      ['known', 'started'],
      ['older-still-listed', 'stored'],
      ['new', 'stored'],
    ])
  })

  it('puts a snapshot behind the flows it already has', () => {
    const log = new FlowLog()
    log.add(ev('live'))
    log.addOlder([ev('old'), ev('live', { provider: 'from-snapshot' })])
    expect(log.snapshot().map((f) => f.hash)).toEqual(['old', 'live'])
    expect(log.snapshot()[1]!.provider).toBe('from-snapshot')
  })

  it('forgets flows long expired, and the oldest past its size', () => {
    const log = new FlowLog(2)
    log.add(ev('gone', { expiresAt: Date.now() - 10 * 60_000 }))
    expect(log.snapshot()).toEqual([])
    for (const h of ['x', 'y', 'z']) log.add(ev(h))
    expect(log.snapshot().map((f) => f.hash)).toEqual(['y', 'z'])
  })

  it('merges without letting undefined fields erase known ones', () => {
    expect(mergeFlow(ev('a', { provider: 'p' }), ev('a', { provider: undefined, error: 'E' }))).toMatchObject({
      provider: 'p',
      error: 'E',
    })
  })
})
