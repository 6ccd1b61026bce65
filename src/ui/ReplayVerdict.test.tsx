import { Box } from 'ink'
import { render } from 'ink-testing-library'
import { describe, expect, it } from 'vitest'
import type { Replay } from '../services/dashboard/pdk.js'
import { ReplayVerdict } from './ReplayVerdict.js'

const NAME = 'ESM plugin: camelCase and snake_case, header arrays, soft failures resolve undefined, phase errors'

function replay(source: 'service' | 'exit' | 'error'): Replay {
  return {
    name: NAME,
    file: 'header-echo.json',
    steps: [],
    result: {
      name: NAME,
      file: 'header-echo.json',
      verdict: { status: 'pass', failures: [], exitCode: 0 },
      passed: true,
      response: { status: 202, headers: {}, body: '', source },
      upstream_request: null,
      phases: [],
      logs: [],
      failures: [],
      telemetry: [],
    },
  }
}

describe('ReplayVerdict', () => {
  it('says what the source of the final response means', () => {
    const said = (source: 'service' | 'exit' | 'error') => render(<ReplayVerdict replay={replay(source)} />).lastFrame()
    expect(said('service')).toContain("Final response 202 (source: service — the upstream's answer)")
    expect(said('exit')).toContain('(source: exit — a plugin called kong.response.exit)')
    expect(said('error')).toContain("(source: error — Kong's own error answer)")
  })

  it('wraps a long fixture name under itself at a narrow width, not back to column 0', () => {
    const lines = render(
      <Box width={50}>
        <ReplayVerdict replay={replay('service')} />
      </Box>,
    )
      .lastFrame()!
      .split('\n')
    expect(lines[0]).toMatch(/^PASS ESM plugin/)
    const name = lines.slice(
      0,
      lines.findIndex((l) => l.startsWith('Final response')),
    )
    expect(name.length).toBeGreaterThan(1)
    for (const line of name.slice(1)) expect(line, line).toMatch(/^ {5}\S/)
    expect(
      name
        .map((l) => l.trim())
        .join(' ')
        .replace(/^PASS /, ''),
    ).toBe(NAME)
  })
})
