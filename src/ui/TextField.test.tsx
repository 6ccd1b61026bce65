import { render } from 'ink-testing-library'
import { describe, expect, it } from 'vitest'
import { editValue, TextField } from './TextField.js'

describe('TextField', () => {
  it('masks a secret and shows what is wrong', () => {
    const { lastFrame } = render(<TextField label="client_secret" value="hunter22" focused masked error="required" />)
    expect(lastFrame()).toContain('********')
    expect(lastFrame()).not.toContain('hunter22')
    expect(lastFrame()).toContain('required')
  })

  it('edits: typed and pasted text appended, one Backspace or several in one chunk', () => {
    expect(editValue('ab', 'c', {})).toBe('abc')
    expect(editValue('ab', 'cd\r', {})).toBe('abcd')
    expect(editValue('abc', '', { delete: true })).toBe('ab')
    expect(editValue('abc', '\u007f\u007f', {})).toBe('a')
    expect(editValue('abc', 'x', { ctrl: true })).toBe('abc')
  })
})
