import { describe, expect, it } from 'vitest'
import { dashArg } from './dash-arg.js'

describe('dashArg', () => {
  it('moves a hash that starts with "-" behind "--"', () => {
    expect(dashArg(['-y2ahK_DFAWrVxTdvTXgeInrExFJErez', '--json'], {})).toEqual([
      '--json',
      '--',
      '-y2ahK_DFAWrVxTdvTXgeInrExFJErez',
    ])
    expect(dashArg(['--broker', 'http://b', '--Ab3_Ab3_Ab3_Ab3_Ab3_'], { broker: {} })).toEqual([
      '--broker',
      'http://b',
      '--',
      '--Ab3_Ab3_Ab3_Ab3_Ab3_',
    ])
  })

  it('leaves flags, short tokens and what already follows "--" alone', () => {
    expect(dashArg(['abc', '--watch', '-w', '--json'], { watch: { char: 'w' } })).toEqual([
      'abc',
      '--watch',
      '-w',
      '--json',
    ])
    expect(dashArg(['--', '-y2ahK_DFAWrVxTdvTXgeInrExFJErez'], {})).toEqual(['--', '-y2ahK_DFAWrVxTdvTXgeInrExFJErez'])
    expect(dashArg(['--not-a-flag'], {})).toEqual(['--not-a-flag'])
  })
})
