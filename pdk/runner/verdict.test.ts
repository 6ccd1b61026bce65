import { describe, expect, it } from 'vitest'
import { FixtureError } from '../fixture/index.js'
import type { RunRecord, ScriptStep } from './record.js'
import { exitCodeOf, verdict } from './verdict.js'

/** A replay that answered 200 from the service, logged nothing and ran no script, with `over` on top. */
const ran = (over: Partial<RunRecord> = {}): RunRecord => ({
  steps: [],
  response: { status: 200, headers: { 'content-type': 'text/plain' }, body: 'ok', source: 'service' },
  upstream: { method: 'GET', path: '/', query: '', headers: { host: 'h' }, body: '' },
  logs: [],
  telemetry: [],
  phases: [{ phase: 'access', plugin: 'p' }],
  outbound: [],
  ...over,
})

const at = '$.plugins[0].phases.access[0]'
const step = (said: Omit<ScriptStep, 'at' | 'call'>): ScriptStep => ({ at, call: 'request.get_header', ...said })
const errorLine = (text: string) => ({ level: 'error', line: `2026/01/01 00:00:00 [error] 1#0: *1 ${text}` })

describe('verdict', () => {
  it('passes a replay that did all the fixture states, with exit code 0', () => {
    const v = verdict(
      { status: 200, headers: { 'Content-Type': 'text/plain' }, body: 'ok', source: 'service' },
      ran({ steps: [step({ returns: ['h'], outcome: { kind: 'returned', values: ['h', null] } })] }),
    )
    expect(v).toEqual({ status: 'pass', failures: [], exitCode: 0 })
  })

  it('fails an expectation that does not hold, with its path, expected and actual; exit code 1', () => {
    const v = verdict({ status: 201, body: { a: 1 } }, ran())
    expect(v.status).toBe('fail')
    expect(v.exitCode).toBe(1)
    expect(v.failures).toEqual([
      { path: '$.expect.status', expected: 201, actual: 200 },
      { path: '$.expect.body', expected: { a: 1 }, actual: 'ok' },
    ])
  })

  it('checks expect.outbound against the resty.http requests the replay made', () => {
    const outbound = [{ method: 'POST', url: 'https://auth.example/introspect', headers: {}, body: 'token=a' }]
    expect(verdict({ outbound: [{ method: 'POST', url: { $match: 'introspect$' } }] }, ran({ outbound })).status).toBe(
      'pass',
    )
    expect(verdict({ outbound: [{ url: 'https://auth.example/other' }] }, ran({ outbound })).failures).toEqual([
      { path: '$.expect.outbound[0].url', expected: 'https://auth.example/other', actual: outbound[0]!.url },
    ])
  })

  it("fails a script call whose values are not the step's returns", () => {
    const v = verdict(
      undefined,
      ran({ steps: [step({ returns: ['x'], outcome: { kind: 'returned', values: ['h'] } })] }),
    )
    expect(v.failures).toEqual([{ path: `${at}.returns`, expected: ['x'], actual: ['h'] }])
  })

  it('fails an unknown kit function, naming the closest one', () => {
    const v = verdict(undefined, ran({ steps: [step({ outcome: { kind: 'unknown', near: 'request.get_header' } })] }))
    expect(v.failures).toEqual([
      {
        path: `${at}.call`,
        expected: 'a kit function (did you mean request.get_header?)',
        actual: 'request.get_header',
      },
    ])
  })

  it('fails an expected throw that did not happen, showing what the call returned', () => {
    const v = verdict(
      undefined,
      ran({ steps: [step({ throws: 'boom', outcome: { kind: 'returned', values: ['h'] } })] }),
    )
    expect(v.failures).toEqual([{ path: `${at}.throws`, expected: 'boom', actual: { returns: ['h'] } }])
  })

  it('fails a throw with another message than the step states, and passes the one it states', () => {
    const threw = (message: string) => ran({ steps: [step({ throws: 'boom', outcome: { kind: 'threw', message } })] })
    expect(verdict(undefined, threw('bad')).failures).toEqual([
      { path: `${at}.throws`, expected: 'boom', actual: 'bad' },
    ])
    expect(verdict(undefined, threw('a boom here')).status).toBe('pass')
  })

  it('fails an unexpected throw through the phase error it caused, not twice', () => {
    const message = 'invalid header name "nil"'
    const failed = ran({
      steps: [step({ outcome: { kind: 'threw', message } })],
      phases: [{ phase: 'access', plugin: 'p', error: message }],
      logs: [errorLine(`[p] access phase failed: ${message}`)],
    })
    expect(verdict(undefined, failed).failures).toEqual([
      {
        path: '$.logs[0]',
        expected: 'no unexpected error (state it in expect.errors)',
        actual: failed.logs[0]!.line,
      },
    ])
    expect(verdict({ errors: ['phase failed'] }, failed).status).toBe('pass')
    expect(verdict({ logs: [{ level: 'err', contains: 'phase failed' }] }, failed).status).toBe('pass')
  })

  it('fails a phase error that left no error line (a module plugin exception) under its phase and plugin', () => {
    const failed = ran({ phases: [{ phase: 'access', plugin: 'p', error: 'TypeError: x is undefined' }] })
    expect(verdict(undefined, failed).failures).toEqual([
      {
        path: '$.phases.access.p',
        expected: 'no unexpected error (state it in expect.errors)',
        actual: 'TypeError: x is undefined',
      },
    ])
    expect(verdict({ errors: ['x is undefined'] }, failed).status).toBe('pass')
  })

  it('fails a timeout: a stopped Lua phase, and a plugin event with no answer', () => {
    const stopped = '[p] access phase did not finish within 50 ms (--timeout): stopped'
    const lua = ran({
      phases: [{ phase: 'access', plugin: 'p', error: stopped }],
      logs: [errorLine(`[p] access phase failed: ${stopped}`)],
    })
    expect(verdict(undefined, lua).failures.map((f) => f.path)).toEqual(['$.logs[0]'])
    const hung = ran({ logs: [errorLine('no data (access got no answer within 100 ms)')] })
    expect(verdict(undefined, hung).status).toBe('fail')
    expect(verdict({ errors: ['no data'] }, hung).status).toBe('pass')
  })

  it('fails an expected error that never happened', () => {
    expect(verdict({ errors: ['never'] }, ran()).failures).toEqual([
      { path: '$.expect.errors[0]', expected: 'never', actual: [] },
    ])
  })

  it('lists step failures first, then expectations, then unexpected errors', () => {
    const v = verdict(
      { status: 201 },
      ran({
        steps: [step({ returns: ['x'], outcome: { kind: 'returned', values: ['h'] } })],
        logs: [errorLine('something broke')],
      }),
    )
    expect(v.failures.map((f) => f.path)).toEqual([`${at}.returns`, '$.expect.status', '$.logs[0]'])
  })

  it('is an error with exit code 2 for a fixture that cannot run, naming the field', () => {
    const e = new FixtureError('f.json', '$.plugins[0].module', 'cannot be loaded')
    const v = verdict(undefined, e)
    expect(v).toEqual({
      status: 'error',
      exitCode: 2,
      error: e,
      failures: [{ path: '$.plugins[0].module', expected: 'a fixture that can run', actual: 'cannot be loaded' }],
    })
  })
})

describe('exitCodeOf', () => {
  it('is the worst exit code of the verdicts: 0 when all pass, 1 with a failure, 2 with an error', () => {
    const pass = verdict(undefined, ran())
    const fail = verdict({ status: 500 }, ran())
    const error = verdict(undefined, new FixtureError('f.json', '$', 'is not valid JSON'))
    expect(exitCodeOf([pass, pass])).toBe(0)
    expect(exitCodeOf([pass, fail])).toBe(1)
    expect(exitCodeOf([fail, error, pass])).toBe(2)
  })
})
