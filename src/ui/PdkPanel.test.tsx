import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { render } from 'ink-testing-library'
import { describe, expect, it, vi } from 'vitest'
import { KEY, settle } from '../../test/helpers/ink.js'
import { listFixtures, replayFixture } from '../services/dashboard/pdk.js'
import { PdkPanel } from './PdkPanel.js'

const panel = { active: true, height: 30, width: 100, onTyping: () => {}, notify: vi.fn() }
const replayer = (dir: string) => ({ dir, list: () => listFixtures(dir), replay: replayFixture })

describe('PdkPanel', () => {
  it('replays a fixture one phase per key, the response as it stands after each', async () => {
    const dir = resolve(import.meta.dirname, '../../fixtures/pdk')
    const { lastFrame, stdin } = render(<PdkPanel {...panel} pdk={replayer(dir)} />)
    await settle()
    expect(lastFrame()).toContain('header-echo.json')
    stdin.write(KEY.down)
    stdin.write(KEY.down)
    stdin.write(KEY.enter)
    await vi.waitFor(() => expect(lastFrame()).toMatch(/Phase 1\/\d+: rewrite · header-echo/))
    expect(lastFrame()).toContain('service.request.set_header("x-rewritten", "yes") → nothing')
    expect(lastFrame()).not.toMatch(/Phase 2\//)
    await settle()
    stdin.write(KEY.enter)
    await vi.waitFor(() => expect(lastFrame()).toMatch(/Phase 2\/\d+: access/))
    expect(lastFrame()).toMatch(/Response after this phase: \d{3}/)
    await settle()
    stdin.write(KEY.left)
    await vi.waitFor(() => expect(lastFrame()).toMatch(/Phase 1\//))
    for (let i = 0; i < 4; i++) {
      await settle()
      stdin.write(KEY.enter)
    }
    await vi.waitFor(() => expect(lastFrame()).toContain('PASS'))
    // The upstream answered 202; the log phase's failure came after it was sent: the source is the service.
    expect(lastFrame()).toContain("Final response 202 (source: service — the upstream's answer)")
  })

  it('shows a failed expectation in red with expected against actual', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pdk-fail-'))
    writeFileSync(
      join(dir, 'wrong.json'),
      JSON.stringify({
        name: 'expects the wrong status',
        request: { url: 'http://api.example/' },
        plugins: [{ name: 'exit', phases: { access: [{ call: 'response.exit', args: [403, 'no'] }] } }],
        expect: { status: 401 },
      }),
    )
    const { lastFrame, stdin } = render(<PdkPanel {...panel} pdk={replayer(dir)} />)
    await settle()
    stdin.write(KEY.enter)
    await vi.waitFor(() => expect(lastFrame()).toMatch(/Phase 1\/1: access · exit/))
    await settle()
    stdin.write(KEY.enter)
    await vi.waitFor(() => expect(lastFrame()).toContain('FAIL expects the wrong status'))
    expect(lastFrame()).toMatch(/✗ \$\.expect\.status\s+expected: 401\s+actual:\s+403/)
    expect(lastFrame()).toContain('Final response 403 (source: exit — a plugin called kong.response.exit)')
  })
})
