import { describe, expect, it } from 'vitest'
import { RECORD_FIELDS, switchValues } from './fields.js'

describe('switchValues', () => {
  const switches = RECORD_FIELDS.filter((f) => f.switch).map((f) => f.flag)

  it('makes --profile and --dpop switches', () => {
    expect(switches).toEqual(['profile', 'dpop'])
  })

  it('turns the older `--profile true` and `--dpop=false` into --profile and --no-dpop', () => {
    expect(switchValues(['--profile', 'true', '--dpop=false', '--scope', 'true'], switches)).toEqual([
      '--profile',
      '--no-dpop',
      '--scope',
      'true',
    ])
  })

  it('leaves a bare switch, any other value and everything after -- alone', () => {
    expect(switchValues(['--profile', '--dpop', 'maybe', '--', '--profile', 'true'], switches)).toEqual([
      '--profile',
      '--dpop',
      'maybe',
      '--',
      '--profile',
      'true',
    ])
  })
})
