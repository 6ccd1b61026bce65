import { describe, expect, it } from 'vitest'
import type { SpecResult } from '../session.js'
import { render } from './index.js'
import { exitCodeOfReport, toReport } from './report.js'

const result = (status: SpecResult['status'], name: string, message?: string): SpecResult => ({
  status,
  name,
  file: 'spec/a_spec.lua',
  line: 3,
  descriptor: status === 'pending' ? 'pending' : 'it',
  message,
  trace: { short_src: 'spec/a_spec.lua', currentline: 4 },
  duration: 0.001,
})
const files = [
  {
    file: 'spec/a_spec.lua',
    results: [
      result('success', 'a ok'),
      result('failure', 'a bad', 'spec/a_spec.lua:4: Expected objects to be equal.\nPassed in:\n(number) 2'),
      result('error', 'a boom', 'spec/a_spec.lua:4: boom'),
      result('pending', 'a later'),
    ],
  },
]
const report = toReport(
  files.flatMap((f) => f.results),
  0.5,
)

describe("busted's outputs", () => {
  it('sorts results into the four lists of the json output; the exit status counts failures and errors', () => {
    const json = JSON.parse(render('json', files, report, false)) as typeof report
    expect(json.successes.map((e) => e.name)).toEqual(['a ok'])
    expect(json.failures[0]).toMatchObject({ name: 'a bad', isError: false, trace: { currentline: 4 } })
    expect(json.errors[0]).toMatchObject({ name: 'a boom', message: 'spec/a_spec.lua:4: boom', isError: true })
    expect(json.pendings.map((e) => e.name)).toEqual(['a later'])
    expect(exitCodeOfReport(report)).toBe(1)
    expect(exitCodeOfReport(toReport([result('success', 'x'), result('pending', 'y')], 0))).toBe(0)
  })

  it('utfTerminal: a mark per test, the counts, then pending, failure and error details', () => {
    const text = render('utfTerminal', files, report, false)
    expect(text.split('\n').slice(0, 2)).toEqual(['●◼✱◌', '1 success / 1 failure / 1 error / 1 pending : 0.5 seconds'])
    expect(text).toContain('Failure → spec/a_spec.lua @ 4\na bad\nspec/a_spec.lua:4: Expected objects to be equal.')
    expect(text).toContain('Error → spec/a_spec.lua @ 4\na boom\n')
  })

  it('TAP: a plan, ok / not ok lines, the message as comments, pending as SKIP', () => {
    expect(render('TAP', files, report, false)).toBe(
      [
        '1..4',
        'ok 1 - a ok',
        'not ok 2 - a bad',
        '# spec/a_spec.lua @ 4',
        '# Failure message: spec/a_spec.lua:4: Expected objects to be equal.',
        '# Passed in:',
        '# (number) 2',
        'not ok 3 - a boom',
        '# spec/a_spec.lua @ 4',
        '# Error message: spec/a_spec.lua:4: boom',
        'ok 4 - # SKIP a later',
        '',
      ].join('\n'),
    )
  })

  it('gtest: RUN / OK / FAILED lines per test and the summary with the failed ones listed', () => {
    const text = render('gtest', files, report, false)
    expect(text).toContain('[ RUN      ] spec/a_spec.lua @ 3: a ok\n[       OK ] spec/a_spec.lua @ 3: a ok (1.00 ms)')
    expect(text).toContain('[  FAILED  ] spec/a_spec.lua @ 3: a bad (1.00 ms)')
    expect(text).toContain('[==========] 3 tests from 1 test file ran. (500.00 ms total)')
    expect(text).toContain('[  FAILED  ] 1 test, listed below:\n[  FAILED  ] spec/a_spec.lua @ 3: a bad')
    expect(text).toContain('[  ERROR   ] 1 test, listed below:')
  })
})
