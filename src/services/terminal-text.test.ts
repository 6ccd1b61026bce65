import { describe, expect, it } from 'vitest'
import { terminalSafe } from './terminal-text.js'

describe('terminalSafe', () => {
  it('shows escapes, bells, carriage returns, C1 and bidi controls as text; keeps tabs and newlines', () => {
    const osc52 = '\u001b]52;c;ZXZpbA==\u0007'
    expect(terminalSafe(`a${osc52}b`)).toBe('a\\x1b]52;c;ZXZpbA==\\x07b')
    expect(terminalSafe('\u001b[2J\u001b]0;title\u0007')).toBe('\\x1b[2J\\x1b]0;title\\x07')
    expect(terminalSafe('x\ry\u009b31m\u007f')).toBe('x\\x0dy\\x9b31m\\x7f')
    expect(terminalSafe('evil\u202etxt.exe')).toBe('evil\\u202etxt.exe')
    expect(terminalSafe('a\tb\nc é 日本')).toBe('a\tb\nc é 日本')
  })
})
