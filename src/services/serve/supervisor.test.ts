import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { BrokerError } from '../../errors/index.js'
import {
  type ForkWorker,
  type SupervisorOptions,
  type WorkerControl,
  type WorkerEvents,
  createSupervisor,
} from './supervisor.js'

/** A worker process as the supervisor sees it; the test plays its part. */
class FakeWorker implements WorkerControl {
  /** What the supervisor did to it: 'shutdown' or a signal's name. */
  readonly told: string[] = []
  private connected = true
  private dead = false

  constructor(
    private readonly events: WorkerEvents,
    readonly pid: number,
  ) {}

  isConnected = () => this.connected
  isDead = () => this.dead
  shutdown = () => void this.told.push('shutdown')
  kill = (signal: NodeJS.Signals) => void this.told.push(signal)

  ready(port = 3000) {
    this.events.message({ type: 'ready', port })
  }
  fatal(message: string) {
    this.events.message({ type: 'fatal', code: 'FAILED', message })
  }
  exit(code: number | null, signal: string | null = null) {
    this.dead = true
    this.connected = false
    this.events.exit(code, signal)
  }
}

function setup(opts: Partial<SupervisorOptions> = {}) {
  const forked: FakeWorker[] = []
  const fork: ForkWorker = (events) => {
    const worker = new FakeWorker(events, 1000 + forked.length)
    forked.push(worker)
    return worker
  }
  const listening: number[] = []
  const restarts: Array<{ pid: number | undefined; how: string; delayMs: number; reason?: string }> = []
  const supervisor = createSupervisor({
    workers: 1,
    fork,
    onListening: (port) => listening.push(port),
    onRestart: (r) => restarts.push(r),
    ...opts,
  })
  return { supervisor, forked, listening, restarts, delays: () => restarts.map((r) => r.delayMs) }
}

/** Whether a promise has settled, after the microtasks queued so far ran. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false
  promise.then(
    () => (done = true),
    () => (done = true),
  )
  await vi.advanceTimersByTimeAsync(0)
  return done
}

beforeEach(() => {
  vi.useFakeTimers()
})
afterEach(() => {
  vi.useRealTimers()
})

describe('createSupervisor', () => {
  it('halt() during a drain stops every worker at once (SIGKILL), without the drain timeout', async () => {
    const { supervisor, forked } = setup({ workers: 2, drainTimeoutMs: 60_000 })
    const run = supervisor.run()
    forked.forEach((w) => w.ready())
    void supervisor.stop('SIGINT')
    expect(forked.map((w) => w.told)).toEqual([['shutdown'], ['shutdown']])
    expect(await settled(run)).toBe(false)
    supervisor.halt()
    expect(forked.map((w) => w.told.at(-1))).toEqual(['SIGKILL', 'SIGKILL'])
    forked.forEach((w) => w.exit(null, 'SIGKILL'))
    await expect(run).resolves.toEqual({ reason: 'SIGINT', port: 3000 })
  })

  it('forks the workers asked for and says it listens once, when the last is ready', () => {
    const { supervisor, forked, listening } = setup({ workers: 3 })
    void supervisor.run()
    expect(forked).toHaveLength(3)
    forked[0]!.ready(4000)
    forked[1]!.ready(4000)
    expect(listening).toEqual([])
    forked[2]!.ready(4000)
    expect(listening).toEqual([4000])
  })

  it('replaces the first crash at once, then waits 100 ms doubling with each further crash of the last minute', async () => {
    const { supervisor, forked, restarts, delays } = setup()
    void supervisor.run()
    forked[0]!.ready()
    for (let i = 0; i < 4; i++) {
      const worker = forked.at(-1)!
      worker.exit(null, 'SIGKILL')
      const delay = restarts.at(-1)!.delayMs
      if (delay > 0) {
        await vi.advanceTimersByTimeAsync(delay - 1)
        expect(forked).toHaveLength(i + 1)
      }
      await vi.advanceTimersByTimeAsync(delay > 0 ? 1 : 0)
      expect(forked).toHaveLength(i + 2)
      forked.at(-1)!.ready()
    }
    expect(delays()).toEqual([0, 100, 200, 400])
    expect(restarts[0]).toEqual({ pid: 1000, how: 'SIGKILL', delayMs: 0 })
  })

  it('names the exit code of a worker that exited on its own', () => {
    const { supervisor, forked, restarts } = setup()
    void supervisor.run()
    forked[0]!.ready()
    forked[0]!.exit(3)
    expect(restarts).toEqual([{ pid: 1000, how: 'code 3', delayMs: 0 }])
  })

  it('waits 30 s at most before a restart', () => {
    const { supervisor, forked, delays } = setup({ workers: 12 })
    void supervisor.run()
    for (const worker of forked) worker.ready()
    for (const worker of [...forked]) worker.exit(1)
    expect(delays().slice(-4)).toEqual([12_800, 25_600, 30_000, 30_000])
  })

  it('forgets crashes older than a minute', async () => {
    const { supervisor, forked, delays } = setup()
    void supervisor.run()
    forked[0]!.ready()
    forked[0]!.exit(1)
    await vi.advanceTimersByTimeAsync(100)
    forked[1]!.exit(1)
    await vi.advanceTimersByTimeAsync(60_001)
    forked[2]!.exit(1)
    expect(delays()).toEqual([0, 100, 0])
  })

  it('does not say it listens again when a replacement becomes ready', async () => {
    const { supervisor, forked, listening } = setup({ workers: 2 })
    void supervisor.run()
    forked[0]!.ready()
    forked[1]!.ready()
    forked[0]!.exit(null, 'SIGKILL')
    await vi.advanceTimersByTimeAsync(100)
    forked[2]!.ready()
    expect(listening).toEqual([3000])
  })

  it('drain asks listening workers to shut down, signals starting ones, and waits for every exit', async () => {
    const { supervisor, forked } = setup({ workers: 2 })
    const run = supervisor.run()
    forked[0]!.ready(4321)
    const stop = supervisor.stop('SIGTERM')
    expect(forked[0]!.told).toEqual(['shutdown'])
    expect(forked[1]!.told).toEqual(['SIGTERM'])
    forked[0]!.exit(0)
    expect(await settled(stop)).toBe(false)
    expect(await settled(run)).toBe(false)
    forked[1]!.exit(0)
    expect(await settled(stop)).toBe(true)
    await expect(run).resolves.toEqual({ reason: 'SIGTERM', port: 4321 })
  })

  it('drain kills a worker that has not exited by the deadline', async () => {
    const { supervisor, forked } = setup({ drainTimeoutMs: 5000 })
    const run = supervisor.run()
    forked[0]!.ready()
    const stop = supervisor.stop('SIGINT')
    await vi.advanceTimersByTimeAsync(4999)
    expect(forked[0]!.told).toEqual(['shutdown'])
    expect(await settled(stop)).toBe(false)
    await vi.advanceTimersByTimeAsync(1)
    expect(forked[0]!.told).toEqual(['shutdown', 'SIGKILL'])
    await stop
    await expect(run).resolves.toEqual({ reason: 'SIGINT', port: 3000 })
  })

  it('does not replace a worker that dies while draining', async () => {
    const { supervisor, forked, restarts } = setup({ workers: 2 })
    const run = supervisor.run()
    forked[0]!.ready()
    forked[1]!.ready()
    void supervisor.stop('SIGTERM')
    forked[0]!.exit(null, 'SIGKILL')
    forked[1]!.exit(0)
    await vi.advanceTimersByTimeAsync(60_000)
    expect(forked).toHaveLength(2)
    expect(restarts).toEqual([])
    await expect(run).resolves.toEqual({ reason: 'SIGTERM', port: 3000 })
  })

  it('does not fork a replacement still waiting when the drain starts', async () => {
    const { supervisor, forked } = setup({ workers: 2 })
    const run = supervisor.run()
    forked[0]!.ready()
    forked[1]!.ready()
    forked[0]!.exit(null, 'SIGKILL')
    const stop = supervisor.stop('SIGTERM')
    expect(forked[0]!.told).toEqual([])
    forked[1]!.exit(0)
    await stop
    await vi.advanceTimersByTimeAsync(1000)
    expect(forked).toHaveLength(2)
    await expect(run).resolves.toMatchObject({ reason: 'SIGTERM' })
  })

  it('stops at once, leaving no timer behind, while its only worker waits for a replacement', async () => {
    const { supervisor, forked } = setup()
    const run = supervisor.run()
    forked[0]!.ready()
    forked[0]!.exit(null, 'SIGKILL')
    expect(vi.getTimerCount()).toBe(1)
    await supervisor.stop('SIGTERM')
    expect(vi.getTimerCount()).toBe(0)
    await expect(run).resolves.toEqual({ reason: 'SIGTERM', port: 3000 })
    expect(forked).toHaveLength(1)
  })

  it('a second stop changes nothing', async () => {
    const { supervisor, forked } = setup()
    const run = supervisor.run()
    forked[0]!.ready()
    void supervisor.stop('SIGTERM')
    await supervisor.stop('SIGINT')
    expect(forked[0]!.told).toEqual(['shutdown'])
    forked[0]!.exit(0)
    await expect(run).resolves.toMatchObject({ reason: 'SIGTERM' })
  })

  it('gives up when a worker exits before any worker has served, after draining the others', async () => {
    const { supervisor, forked, restarts } = setup({ workers: 2 })
    const run = supervisor.run()
    forked[0]!.exit(1)
    expect(forked[1]!.told).toEqual(['SIGTERM'])
    expect(await settled(run)).toBe(false)
    forked[1]!.exit(null, 'SIGTERM')
    const err = await run.catch((e: unknown) => e)
    expect(err).toBeInstanceOf(BrokerError)
    expect(err).toMatchObject({ code: 'FAILED', message: 'A worker exited before it could serve (code 1).' })
    expect(restarts).toEqual([])
    expect(forked).toHaveLength(2)
  })

  it('gives up with the reason a worker sends when it cannot start', async () => {
    const { supervisor, forked } = setup()
    const run = supervisor.run()
    forked[0]!.fatal('listen EADDRINUSE: address already in use 0.0.0.0:3000')
    expect(forked[0]!.told).toEqual(['SIGTERM'])
    forked[0]!.exit(1)
    await expect(run).rejects.toMatchObject({
      code: 'FAILED',
      message: 'A worker could not start: listen EADDRINUSE: address already in use 0.0.0.0:3000',
    })
    await vi.advanceTimersByTimeAsync(60_000)
    expect(forked).toHaveLength(1)
  })

  it('keeps replacing, with backoff, a worker that fails at start-up once another worker has served, saying why', async () => {
    const { supervisor, forked, delays, restarts } = setup({ workers: 2 })
    const run = supervisor.run()
    forked[0]!.ready()
    forked[1]!.fatal('boom')
    forked[1]!.exit(1)
    for (let i = 2; i < 5; i++) {
      await vi.advanceTimersByTimeAsync(delays().at(-1)!)
      forked[i]!.fatal('boom')
      forked[i]!.exit(1)
    }
    expect(delays()).toEqual([0, 100, 200, 400])
    expect(restarts[0]).toEqual({ pid: 1001, how: 'code 1', delayMs: 0, reason: 'boom' })
    expect(await settled(run)).toBe(false)
  })
})
