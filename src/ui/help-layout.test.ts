import { describe, expect, it } from 'vitest'
import { helpLayout, type KeyHelp } from './help-layout.js'

const panel: KeyHelp = [
  ['↑↓', 'field'],
  ['←→', 'preset'],
  ['Enter', 'next/store'],
  ['o', 'open start URL'],
  ['n', 'new'],
]
const global: KeyHelp = [
  ['Tab/1-4', 'panel'],
  ['q', 'quit'],
]
const text = (lines: ReturnType<typeof helpLayout>) =>
  lines.map((l) => l.map(([k, d]) => (d ? `${k} ${d}` : k)).join('  '))

describe('the help line', () => {
  it('is one line when it fits', () => {
    expect(helpLayout(panel, global, 160)).toHaveLength(1)
  })

  it('wraps to two lines at 80 columns, how to quit on it', () => {
    const lines = text(helpLayout(panel, global, 80))
    expect(lines).toHaveLength(2)
    for (const line of lines) expect(line.length).toBeLessThan(80)
    expect(lines.at(-1)).toContain('q quit')
  })

  it('drops the words of the panel keys before it drops how to quit', () => {
    const lines = text(helpLayout(panel, global, 40, 1))
    expect(lines).toEqual(['Tab/1-4 panel  q quit'])
    expect(text(helpLayout(panel, global, 60, 1))).toEqual(['↑↓  ←→  Enter  o  n  Tab/1-4 panel  q quit'])
  })
})
