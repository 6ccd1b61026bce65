import { render } from 'ink-testing-library'
import { describe, expect, it, vi } from 'vitest'
import { KEY, settle } from '../../test/helpers/ink.js'
import { NewFlowPanel } from './NewFlowPanel.js'
import type { DashboardBroker } from './types.js'

const panel = { active: true, height: 20, width: 100, notify: vi.fn() }

function setup() {
  const broker: DashboardBroker = {
    url: 'http://localhost:3000',
    store: vi.fn(async () => ({
      hash: 'H4sh0000',
      url: 'http://localhost:3000/start?hash=H4sh0000',
      plugin: 'oauth_2_2-legged',
      expires_in: 60,
    })),
    hashCheck: vi.fn(),
  }
  const openUrl = vi.fn(async () => ({
    opened: false,
    message: 'No browser here (no DISPLAY): open the URL yourself.',
  }))
  const onTyping = vi.fn()
  const app = render(<NewFlowPanel {...panel} onTyping={onTyping} broker={broker} openUrl={openUrl} />)
  return { ...app, broker, openUrl, onTyping }
}

async function keys(stdin: { write(s: string): void }, ...seq: string[]) {
  for (const k of seq) {
    stdin.write(k)
    await settle()
  }
}

describe('NewFlowPanel', () => {
  it('offers the presets of broker store and the fields each requires', async () => {
    const { lastFrame, stdin } = setup()
    expect(lastFrame()).toMatch(/preset\s+‹ oauth2-3 ›/)
    expect(lastFrame()).toMatch(/client_id[\s\S]*authorize_url[\s\S]*access_url[\s\S]*callback \(optional\)/)
    // The 3-legged flow takes a client secret (a confidential client), optional and masked.
    expect(lastFrame()).toMatch(/client_id\s*\n.*client_secret \(optional\)\s*\n.*authorize_url/)
    await keys(stdin, KEY.right)
    expect(lastFrame()).toMatch(/‹ oauth2-2 › OAuth 2 client credentials/)
    expect(lastFrame()).toContain('client_secret')
  })

  it('validates URLs as typed, masks secrets, stores, and opens the start URL on o', async () => {
    const { lastFrame, stdin, broker, openUrl, onTyping } = setup()
    await keys(stdin, KEY.right, KEY.down)
    await vi.waitFor(() => expect(onTyping).toHaveBeenLastCalledWith(true))
    await keys(stdin, 'my-client', KEY.enter, 'sup3r-secret', KEY.enter)
    expect(lastFrame()).not.toContain('sup3r-secret')
    expect(lastFrame()).toContain('************')
    await keys(stdin, 'not a url')
    expect(lastFrame()).toContain('Enter an absolute http(s) URL')
    await keys(stdin, ...Array(9).fill(KEY.backspace), 'https://idp.example/token')
    expect(lastFrame()).not.toContain('Enter an absolute http(s) URL')
    await keys(stdin, KEY.enter, KEY.down, KEY.enter)
    await vi.waitFor(() => expect(lastFrame()).toContain('Stored (oauth2-2)'))
    expect(broker.store).toHaveBeenCalledWith({
      auth_version: '2',
      auth_leg: '2',
      client_id: 'my-client',
      client_secret: 'sup3r-secret',
      access_url: 'https://idp.example/token',
    })
    expect(lastFrame()).toContain('http://localhost:3000/start?hash=H4sh0000')
    // The secret typed is gone from the form once stored.
    expect(lastFrame()).not.toContain('****')
    await keys(stdin, 'o')
    expect(openUrl).toHaveBeenCalledWith('http://localhost:3000/start?hash=H4sh0000')
    // No browser: said, with the URL to open by hand.
    await vi.waitFor(() =>
      expect(lastFrame()).toMatch(
        /No browser here \(no DISPLAY\): open the URL yourself\.\n {2}http:\/\/localhost:3000\/start\?hash=H4sh0000/,
      ),
    )
    await keys(stdin, 'n')
    expect(lastFrame()).not.toContain('*')
  })

  it('does not store while a required field is empty', async () => {
    const { lastFrame, stdin, broker } = setup()
    await keys(stdin, KEY.up, ...Array(8).fill(KEY.down), KEY.enter)
    expect(lastFrame()).toContain('fill in the required fields first')
    expect(broker.store).not.toHaveBeenCalled()
  })
})
