import { describe, expect, it } from 'vitest'
import { FAILOVER_WINDOW_MS, Shortfall, type ShortfallPolicy } from './shortfall.js'

// The policy alone, on a clock and a fence of the test's own: what each write's WAIT is, and whether a
// short one is answered. flow-store.test.ts drives it through a FlowStore on a real Redis.

const WAIT_MS = 750

function setup(policy: ShortfallPolicy) {
  const clock = { now: 1_000_000 }
  const fence: { fenced: boolean; epoch: number; liftedAt?: number; switchedAt?: number } = {
    fenced: false,
    epoch: 0,
  }
  const told = { warn: [] as string[], info: [] as string[] }
  const log = { warn: (m: string) => told.warn.push(m), info: (m: string) => told.info.push(m) }
  const shortfall = new Shortfall(policy, 1, WAIT_MS, fence, log, () => clock.now)
  /** A Sentinel switch the fence saw, `ago` ms before now. */
  const switched = (ago = 0) => {
    fence.epoch++
    fence.liftedAt = fence.switchedAt = clock.now - ago
  }
  /** One write: its plan, and (when it is lenient and sent a WAIT) that WAIT answered with `acked`. */
  const write = (acked: number) => {
    const plan = shortfall.plan()
    if (plan.lenient && plan.waitMs !== undefined) shortfall.answered(plan, acked)
    return plan
  }
  return { clock, fence, told, switched, write, shortfall }
}

describe('store.replicaShortfall failover (the default)', () => {
  it('with no switch seen, a write waits the full WAIT and a short one is refused: a replica down in steady state holds writes back', () => {
    const { write } = setup('failover')
    expect(write(0)).toEqual({ waitMs: WAIT_MS, lenient: false })
  })

  it('an aborted failover (the fence lifted, no switch) opens no window', () => {
    const { fence, write } = setup('failover')
    fence.epoch++
    fence.liftedAt = 1_000_000
    expect(write(0)).toEqual({ waitMs: WAIT_MS, lenient: false })
  })

  it('right after a switch, the first write probes (a short WAIT), a short answer is taken and told once as a warning, and the next second sends no WAIT', () => {
    const { switched, write, told, clock } = setup('failover')
    switched()
    expect(write(0)).toMatchObject({ waitMs: 50, lenient: true })
    expect(told.warn).toHaveLength(1)
    expect(told.warn[0]).toMatch(
      /answered with 0 of the 1 replicas .* after a failover .*30 s after the switch at most/,
    )
    clock.now += 500
    expect(write(0)).toEqual({ lenient: true, window: 1_000_000 })
    clock.now += 600
    expect(write(0)).toMatchObject({ waitMs: 50, lenient: true })
    expect(told.warn).toHaveLength(1)
  })

  it('the window closes when the replicas acknowledge again: a later shortfall is refused, and that is told', () => {
    const { switched, write, told, clock } = setup('failover')
    switched()
    write(0)
    clock.now += 1500
    expect(write(1)).toMatchObject({ lenient: true })
    expect(told.info).toEqual([expect.stringMatching(/acknowledge writes again 1500 ms after the failover's switch/)])
    expect(write(0)).toEqual({ waitMs: WAIT_MS, lenient: false })
  })

  it(`the window closes ${FAILOVER_WINDOW_MS / 1000} s after the switch though the replicas are not back, with a warning`, () => {
    const { switched, write, told, clock } = setup('failover')
    switched()
    write(0)
    clock.now += FAILOVER_WINDOW_MS - 1
    expect(write(0).lenient).toBe(true)
    clock.now += 1
    expect(write(0)).toEqual({ waitMs: WAIT_MS, lenient: false })
    expect(told.warn.at(-1)).toMatch(/30 s after the failover's switch only 0 of the 1 replicas .* refused/)
    const warnings = told.warn.length
    write(0)
    expect(told.warn).toHaveLength(warnings)
  })

  it('a switch long past opens no window; the next switch opens a new one', () => {
    const { switched, write } = setup('failover')
    switched(FAILOVER_WINDOW_MS + 1)
    expect(write(0).lenient).toBe(false)
    switched()
    expect(write(0)).toMatchObject({ waitMs: 50, lenient: true })
  })

  it('a window the replicas closed stays closed; the next switch opens a new one', () => {
    const { switched, write, clock } = setup('failover')
    switched()
    write(1)
    expect(write(0).lenient).toBe(false)
    clock.now += 5000
    switched()
    expect(write(0)).toMatchObject({ waitMs: 50, lenient: true })
  })
})

describe('store.replicaShortfall refuse and accept', () => {
  it('refuse: a short WAIT is refused, even right after a switch', () => {
    const { switched, write } = setup('refuse')
    switched()
    expect(write(0)).toEqual({ waitMs: WAIT_MS, lenient: false })
  })

  it('accept: a short WAIT is answered with no switch at all, and the next second sends no WAIT', () => {
    const { write, told } = setup('accept')
    expect(write(0)).toMatchObject({ waitMs: WAIT_MS, lenient: true })
    expect(write(0)).toEqual({ lenient: true })
    expect(told.warn[0]).toMatch(/store.replicaShortfall is accept/)
  })

  it('accept: the first write after a failover probes', () => {
    const { switched, write } = setup('accept')
    switched()
    expect(write(0)).toMatchObject({ waitMs: 50, lenient: true })
  })
})
