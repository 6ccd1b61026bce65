import { describe, expect, it } from 'vitest'
import { FlowError } from '../contract.js'
import { formShapeProblem, jsonShapeProblem, MAX_DEPTH, MAX_VALUES, readProviderJson } from './provider-json.js'
import { tokenFromAnswer } from './token-answer.js'

const nested = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`

describe("a provider's answer, bounded before it is parsed", () => {
  it('takes what providers send: a few levels, a few dozen fields, brackets and commas inside strings', () => {
    expect(jsonShapeProblem(nested(MAX_DEPTH))).toBeUndefined()
    expect(jsonShapeProblem('{"authed_user":{"id":"U1","scope":"a,b,c"},"team":{"name":"[{x}]"}}')).toBeUndefined()
    // An escaped quote does not end the string: the brackets after it are still text.
    expect(jsonShapeProblem(`{"s":"\\"${'['.repeat(100)}"}`)).toBeUndefined()
    expect(jsonShapeProblem(`[${Array.from({ length: MAX_VALUES }, () => 1).join(',')}]`)).toBeUndefined()
  })

  it('refuses more depth or more values than that, whatever the layout', () => {
    expect(jsonShapeProblem(nested(MAX_DEPTH + 1))).toBe(`nests deeper than ${MAX_DEPTH} levels`)
    expect(jsonShapeProblem('['.repeat(100_000))).toBe(`nests deeper than ${MAX_DEPTH} levels`)
    expect(jsonShapeProblem(`[${Array.from({ length: MAX_VALUES + 1 }, () => 1).join(',')}]`)).toBe(
      `holds more than ${MAX_VALUES} values`,
    )
    expect(formShapeProblem(Array.from({ length: MAX_VALUES + 1 }, (_, i) => `f${i}=1`).join('&'))).toBe(
      `holds more than ${MAX_VALUES} values`,
    )
    expect(formShapeProblem('a=1&b=2')).toBeUndefined()
  })

  it('names the answer in a provider error, and reads what is not JSON as undefined', () => {
    expect(() => readProviderJson(nested(100_000), "The provider's JWKS")).toThrow(
      expect.objectContaining({
        brokerCode: 'PROVIDER_ERROR',
        oauthError: 'server_error',
        description: `The provider's JWKS nests deeper than ${MAX_DEPTH} levels; the broker reads no answer that large`,
      }),
    )
    expect(readProviderJson('{"a":', 'x')).toBeUndefined()
    expect(readProviderJson('{"a":[1]}', 'x')).toEqual({ a: [1] })
  })

  it("turns a token answer nested 100,000 deep into the provider's error, before JSON.stringify could overflow", () => {
    const answer = { status: 200, headers: { 'content-type': 'application/json' }, body: nested(100_000) }
    let err: unknown
    try {
      tokenFromAnswer(answer)
    } catch (e) {
      err = e
    }
    expect(err).toBeInstanceOf(FlowError)
    expect((err as FlowError).description).toMatch(/^The token endpoint's answer nests deeper than 32 levels/)
  })
})
