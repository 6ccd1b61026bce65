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
const panel = { active: true, height: 20, width: 100, onTyping: () => {} }

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
    expect(lastFrame()).toMatch(/expired\s+expired/)
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
    expect(lastFrame()).toMatch(/client_secret\s+\[redacted\]/)
    expect(lastFrame()).toContain('42s left')
    stdin.write(KEY.escape)
    await vi.waitFor(() => expect(lastFrame()).toContain('2 flows'))
  })

  it('says how to get a flow when there is none', () => {
    const { lastFrame } = render(<FlowsPanel {...panel} flows={[]} broker={broker()} />)
    expect(lastFrame()).toContain('No flows yet')
  })
})
