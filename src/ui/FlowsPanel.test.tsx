import { render } from 'ink-testing-library'
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { HashCheck } from '../services/broker-client.js'
import { FlowsPanel } from './FlowsPanel.js'
import { flowEvent, KEY, settle } from '../../test/helpers/ink.js'
import type { DashboardBroker } from './types.js'

const broker = (answer?: Partial<HashCheck>): DashboardBroker => ({
  url: 'http://localhost:3000',
  store: vi.fn(),
  hashCheck: vi.fn(
    async (hash: string) =>
      ({
        hash,
        plugin: 'oauth_2_2-legged',
        progress: 'stored',
        expires_in: 42,
        created_at: '',
        expires_at: '',
        record: { client_id: 'cid', client_secret: '[redacted]' },
        ...answer,
      }) as HashCheck,
  ),
})
const panel = { active: true, height: 20, width: 100, onTyping: () => {}, notify: vi.fn() }

afterEach(() => {
  vi.useRealTimers()
})

describe('FlowsPanel', () => {
  it('ticks the countdown every second and turns it to "expired" at zero', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'Date'] })
    const flows = [flowEvent({ expiresAt: Date.now() + 3000 })]
    const { lastFrame, unmount } = render(<FlowsPanel {...panel} flows={flows} broker={broker()} />)
    expect(lastFrame()).toMatch(/AbCdEfGh\s+oauth_2_2-legged\s+provider\.example\s+stored\s+3s/)
    vi.advanceTimersByTime(1000)
    await settle()
    expect(lastFrame()).toMatch(/stored\s+2s/)
    vi.advanceTimersByTime(2000)
    await settle()
    // The progress reached stays; the time column says it ran out.
    expect(lastFrame()).toMatch(/AbCdEfGh\s+oauth_2_2-legged\s+provider\.example\s+stored\s+expired/)
    expect(lastFrame()).not.toMatch(/expired\s+expired/)
    unmount()
  })

  it('stops its timer when unmounted', () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'Date'] })
    const { unmount } = render(<FlowsPanel {...panel} flows={[flowEvent()]} broker={broker()} />)
    expect(vi.getTimerCount()).toBe(1)
    unmount()
    expect(vi.getTimerCount()).toBe(0)
  })

  it('opens the selected record on Enter, secrets as the broker redacted them, and Esc goes back', async () => {
    const b = broker()
    const flows = [
      flowEvent({ hash: 'second00000000000000000000000000' }),
      flowEvent({ hash: 'first000000000000000000000000000' }),
    ]
    const { lastFrame, stdin } = render(<FlowsPanel {...panel} flows={flows} broker={b} />)
    stdin.write(KEY.down)
    await settle()
    stdin.write(KEY.enter)
    await vi.waitFor(() => expect(lastFrame()).toContain('client_secret'))
    expect(b.hashCheck).toHaveBeenCalledWith('first000000000000000000000000000')
    // Two spaces between the longest name and its value, as in the New flow form.
    expect(lastFrame()).toMatch(/ {2}client_id {6}cid\n {2}client_secret {2}\[redacted\]/)
    // Progress and countdown are the live flow's, as the table shows them, not the answer's (42 s).
    expect(lastFrame()).toMatch(/first000… · oauth_2_2-legged · stored · (60|59)s left/)
    stdin.write(KEY.escape)
    await vi.waitFor(() => expect(lastFrame()).toContain('2 flows'))
  })

  it('says how to get a flow when there is none', () => {
    const { lastFrame } = render(<FlowsPanel {...panel} flows={[]} broker={broker()} />)
    expect(lastFrame()).toContain('No flows yet')
  })

  it("counts the opened record's time down live, and says expired at zero", async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'Date'] })
    const flows = [flowEvent({ expiresAt: Date.now() + 2000 })]
    const { lastFrame, stdin } = render(<FlowsPanel {...panel} flows={flows} broker={broker()} />)
    stdin.write(KEY.enter)
    await vi.waitFor(() => expect(lastFrame()).toMatch(/stored · 2s left/))
    vi.advanceTimersByTime(1000)
    await settle()
    expect(lastFrame()).toMatch(/stored · 1s left/)
    vi.advanceTimersByTime(1000)
    await settle()
    expect(lastFrame()).toMatch(/stored · expired/)
  })

  it('keeps the selection on its flow when a new flow arrives, and opens that one', async () => {
    const b = broker()
    const older = [
      flowEvent({ hash: 'second00000000000000000000000000' }),
      flowEvent({ hash: 'first000000000000000000000000000' }),
    ]
    const { lastFrame, stdin, rerender } = render(<FlowsPanel {...panel} flows={older} broker={b} />)
    stdin.write(KEY.down)
    await vi.waitFor(() => expect(lastFrame()).toMatch(/› first000/))
    rerender(
      <FlowsPanel {...panel} flows={[flowEvent({ hash: 'newest00000000000000000000000000' }), ...older]} broker={b} />,
    )
    await vi.waitFor(() => expect(lastFrame()).toContain('3 flows'))
    expect(lastFrame()).toMatch(/› first000/)
    stdin.write(KEY.enter)
    await settle()
    expect(b.hashCheck).toHaveBeenCalledWith('first000000000000000000000000000')
  })

  it('keeps every row on one line at 80 columns: columns shrink, none wraps', () => {
    const flows = [flowEvent({ provider: 'a-very-long-provider-host-name.example.com', error: 'PROVIDER_ERROR' })]
    const { lastFrame } = render(<FlowsPanel {...panel} width={80} flows={flows} broker={broker()} />)
    const lines = lastFrame()!.split('\n')
    expect(lines).toHaveLength(3)
    for (const line of lines) expect(line.length).toBeLessThan(80)
    expect(lines[2]).toMatch(/AbCdEfGh\s+oauth_2_2-legged\s+a-very-long-provi…\s+stored\s+60s/)
  })
})
