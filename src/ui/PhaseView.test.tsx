import { Box } from 'ink'
import { render } from 'ink-testing-library'
import { describe, expect, it } from 'vitest'
import { PhaseView } from './PhaseView.js'

const ERROR =
  'function cannot be called in log phase (only in: rewrite, access, balancer, response, header_filter, error, admin_api)'

describe('PhaseView', () => {
  it('wraps a long plugin error under its own start, never back to column 0, and keeps all of it', () => {
    const step = {
      trace: {
        phase: 'log' as const,
        plugin: 'header-echo',
        calls: [{ call: 'response.set_header', args: ['x-too-late', '1'], throws: ERROR }],
        error: ERROR,
      },
      response: { status: 202, headers: {}, body: '' },
    }
    const { lastFrame } = render(
      <Box width={50}>
        <PhaseView step={step} index={3} total={3} />
      </Box>,
    )
    const lines = lastFrame()!.split('\n')
    const first = lines.findIndex((l) => l.includes('✗ plugin error:'))
    // The message's lines run up to the blank line before the response.
    const last = lines.indexOf(
      lines.slice(first).find((l) => l.trim() === '')!,
      first,
    )
    const message = lines.slice(first, last)
    expect(message.length, lastFrame()).toBeGreaterThan(2)
    const indent = message[0]!.indexOf('function')
    for (const line of message.slice(1)) expect(line.slice(0, indent).trim(), line).toBe('')
    expect(message.map((l) => l.trim()).join(' ')).toContain(ERROR)
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(50)
  })

  it('marks a throw the fixture expected as pdk run does, and one it did not as a failure', () => {
    const step = (expected: boolean) => ({
      trace: {
        phase: 'access' as const,
        plugin: 'p',
        calls: [
          {
            call: 'request.get_header',
            args: [1],
            throws: 'header name must be a string',
            ...(expected ? { expected: true as const } : {}),
          },
        ],
      },
      response: { status: 200, headers: {}, body: '' },
    })
    const expected = render(<PhaseView step={step(true)} index={1} total={1} />).lastFrame()!
    expect(expected).toContain('request.get_header(1) ✓ throws as expected: header name must be a string')
    const failed = render(<PhaseView step={step(false)} index={1} total={1} />).lastFrame()!
    expect(failed).toContain('request.get_header(1) ✗ header name must be a string')
  })
})
