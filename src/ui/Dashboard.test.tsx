import { render } from 'ink-testing-library'
import { describe, expect, it, vi } from 'vitest'
import { flowEvent, KEY, settle } from '../../test/helpers/ink.js'
import { FlowEvents } from '../broker/events.js'
import { localEventSource } from '../services/dashboard/source.js'
import { Dashboard } from './Dashboard.js'
import type { DashboardProps, StepWalker } from './types.js'

function props(events = new FlowEvents()): DashboardProps {
  return {
    mode: 'embedded',
    source: localEventSource(events),
    broker: { url: 'http://localhost:3000', store: vi.fn(), hashCheck: vi.fn() },
    walker: vi.fn(),
    pdk: { dir: 'fixtures/pdk', list: () => ['fixtures/pdk/a.json', 'fixtures/pdk/b.json'], replay: vi.fn() },
    openUrl: vi.fn(),
  }
}

describe('Dashboard', () => {
  it('shows a flow the broker publishes without a key press', async () => {
    const events = new FlowEvents()
    const { lastFrame } = render(<Dashboard {...props(events)} />)
    expect(lastFrame()).toContain('No flows yet')
    events.publish({
      type: 'stored',
      hash: 'NewFlow1xxxxxxxxxxxxxxxxxxxxxxxx',
      plugin: 'oauth_2_3-legged',
      progress: 'stored',
      provider: 'idp.example',
      expiresAt: Date.now() + 60_000,
    })
    await vi.waitFor(() =>
      expect(lastFrame()).toMatch(/NewFlow1\s+oauth_2_3-legged\s+idp\.example\s+stored\s+(60|59)s/),
    )
    events.publish({
      type: 'redirected',
      hash: 'NewFlow1xxxxxxxxxxxxxxxxxxxxxxxx',
      plugin: 'oauth_2_3-legged',
      progress: 'awaiting_callback',
    })
    await vi.waitFor(() => expect(lastFrame()).toMatch(/NewFlow1.*awaiting callback/))
  })

  it('lists the flows of the snapshot the source had before the dashboard opened', async () => {
    const events = new FlowEvents()
    const p = props(events)
    events.emit('flow', flowEvent({ hash: 'Earlier1xxxxxxxxxxxxxxxxxxxxxxxx' }))
    const { lastFrame } = render(<Dashboard {...p} />)
    await vi.waitFor(() => expect(lastFrame()).toContain('Earlier1'))
  })

  it('switches panels with Tab and number keys, the help line always shown', async () => {
    const { lastFrame, stdin } = render(<Dashboard {...props()} />)
    expect(lastFrame()).toMatch(/Enter open record.*q quit/)
    stdin.write(KEY.tab)
    await vi.waitFor(() => expect(lastFrame()).toContain('preset'))
    expect(lastFrame()).toMatch(/o open start URL/)
    stdin.write(KEY.tab)
    await settle()
    stdin.write('4')
    await vi.waitFor(() => expect(lastFrame()).toContain('Fixtures in fixtures/pdk (2)'))
    stdin.write('3')
    await vi.waitFor(() => expect(lastFrame()).toContain('Flows (0)'))
    stdin.write('1')
    await vi.waitFor(() => expect(lastFrame()).toContain('No flows yet'))
    stdin.write('\u001B[Z')
    await vi.waitFor(() => expect(lastFrame()).toContain('Fixtures in fixtures/pdk'))
  })

  it('leaves on q', async () => {
    const { stdin, lastFrame } = render(<Dashboard {...props()} />)
    stdin.write('q')
    await settle()
    // An unmounted app no longer answers keys.
    const before = lastFrame()
    stdin.write('2')
    await settle()
    expect(lastFrame()).toBe(before)
  })

  it('says the terminal is too small instead of drawing', async () => {
    const { lastFrame, stdout } = render(<Dashboard {...props()} />)
    Object.defineProperty(stdout, 'columns', { value: 60, configurable: true })
    Object.defineProperty(stdout, 'rows', { value: 15, configurable: true })
    stdout.emit('resize')
    await vi.waitFor(() => expect(lastFrame()).toContain('Terminal too small (60×15)'))
    expect(lastFrame()).not.toContain('1 Flows')
  })

  it('says when a key does nothing where it is pressed', async () => {
    const { lastFrame, stdin } = render(<Dashboard {...props()} />)
    stdin.write('x')
    await vi.waitFor(() =>
      expect(lastFrame()).toContain('"x" does nothing here; the keys that work are on the last line.'),
    )
    stdin.write(KEY.enter)
    await vi.waitFor(() => expect(lastFrame()).toContain('No flow to open yet: store one in panel 2.'))
  })

  it('wraps the help line at 80 columns rather than hide how to quit', async () => {
    const { lastFrame, stdout, stdin } = render(<Dashboard {...props()} />)
    Object.defineProperty(stdout, 'columns', { value: 80, configurable: true })
    Object.defineProperty(stdout, 'rows', { value: 24, configurable: true })
    stdout.emit('resize')
    stdin.write('2')
    await vi.waitFor(() => expect(lastFrame()).toContain('preset'))
    const lines = lastFrame()!.split('\n')
    expect(lines.at(-2)).toMatch(/^↑↓ field {2}←→ preset {2}Enter next\/store {2}o open start URL {2}n new/)
    expect(lines.at(-1)).toMatch(/q quit$/)
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(80)
  })

  it('starts a new walk without the last walk\'s "The walk has ended" line', async () => {
    const events = new FlowEvents()
    const p = props(events)
    // One hop, then the chain ends.
    const walker = (url: string): StepWalker => {
      let done = false
      return {
        get pending() {
          return done ? undefined : url
        },
        get stopped() {
          return done ? { reason: 'done' as const, message: 'the final answer: 200 OK' } : undefined
        },
        next: async () => {
          done = true
          return { n: 1, method: 'GET', url, status: 200, params: {}, cookies: [] }
        },
      }
    }
    const { lastFrame, stdin } = render(<Dashboard {...p} walker={walker} />)
    events.publish({ type: 'stored', hash: 'WalkMe00xxxxxxxxxxxxxxxxxxxxxxxx', plugin: 'p', progress: 'stored' })
    stdin.write('3')
    await vi.waitFor(() => expect(lastFrame()).toContain('WalkMe00'))
    // Each key once the screen is ready for it: under load a second Enter sent early was lost.
    stdin.write(KEY.enter)
    await vi.waitFor(() => expect(lastFrame()).toContain('press Enter to follow'))
    stdin.write(KEY.enter)
    await vi.waitFor(() => expect(lastFrame()).toContain('Ended: the final answer'))
    stdin.write(KEY.enter)
    await vi.waitFor(() => expect(lastFrame()).toContain('The walk has ended: Esc to walk another.'))
    stdin.write(KEY.escape)
    await vi.waitFor(() => expect(lastFrame()).toContain('Flows (1)'))
    stdin.write(KEY.enter)
    await vi.waitFor(() => expect(lastFrame()).toContain('press Enter to follow'))
    expect(lastFrame()).not.toContain('The walk has ended')
  })

  it('keeps the flows in creation order, newest first, as events arrive: ↑ selects the flow above', async () => {
    const events = new FlowEvents()
    const p = props(events)
    const { lastFrame, stdin } = render(<Dashboard {...p} />)
    const flow = (hash: string, type: 'stored' | 'redirected', progress: string) =>
      events.publish({
        type,
        hash: `${hash}xxxxxxxxxxxxxxxxxxxxxxxx`,
        plugin: 'p',
        progress,
        expiresAt: Date.now() + 60_000,
      })
    flow('Oldest00', 'stored', 'stored')
    flow('Middle00', 'stored', 'stored')
    flow('Newest00', 'stored', 'stored')
    await vi.waitFor(() => expect(lastFrame()).toMatch(/› Newest00[^]*Middle00[^]*Oldest00/))
    await settle()
    stdin.write(KEY.down)
    await vi.waitFor(() => expect(lastFrame()).toMatch(/› Middle00/))
    // The oldest flow moves on: it stays where it was created, and so does the selection.
    flow('Oldest00', 'redirected', 'awaiting_callback')
    await vi.waitFor(() => expect(lastFrame()).toMatch(/Oldest00.*awaiting callback/))
    expect(lastFrame()).toMatch(/Newest00[^]*› Middle00[^]*Oldest00/)
    stdin.write(KEY.up)
    await vi.waitFor(() => expect(lastFrame()).toMatch(/› Newest00/))
    vi.mocked(p.broker.hashCheck).mockRejectedValue(new Error('not looked up in this test'))
    stdin.write(KEY.enter)
    await vi.waitFor(() => expect(p.broker.hashCheck).toHaveBeenCalled())
    expect(p.broker.hashCheck).toHaveBeenCalledWith('Newest00xxxxxxxxxxxxxxxxxxxxxxxx')
  })
})
