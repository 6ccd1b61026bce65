import { describe, expect, it } from 'vitest'
import { checkLimit, decodeArgs, encodeArgs, unescape } from './args.js'

describe('decodeArgs', () => {
  it('gives true for arguments without a value', () => {
    expect(decodeArgs('foo&bar', 100).args).toEqual({ foo: true, bar: true })
  })
  it('gives empty strings for arguments with an empty value', () => {
    expect(decodeArgs('foo=&bar=', 100).args).toEqual({ foo: '', bar: '' })
  })
  it('collects repeated arguments into arrays in order', () => {
    expect(decodeArgs('a=1&b=x&a=2&a', 100).args).toEqual({ a: ['1', '2', true], b: 'x' })
  })
  it('unescapes names and values, + as space', () => {
    expect(decodeArgs('na%20me=a+b%2Fc', 100).args).toEqual({ 'na me': 'a b/c' })
  })
  it('stops at the limit and says so', () => {
    expect(decodeArgs('a=1&b=2&c=3', 2)).toEqual({ args: { a: '1', b: '2' }, truncated: true })
  })
})

describe('checkLimit', () => {
  it('accepts 1..1000 and nil', () => {
    expect(() => checkLimit('max_args', 1)).not.toThrow()
    expect(() => checkLimit('max_args', 1000)).not.toThrow()
    expect(() => checkLimit('max_args', undefined)).not.toThrow()
  })
  it("uses Kong's messages", () => {
    expect(() => checkLimit('max_args', 0)).toThrow('max_args must be >= 1')
    expect(() => checkLimit('max_headers', 1001)).toThrow('max_headers must be <= 1000')
    expect(() => checkLimit('max_headers', '5')).toThrow('max_headers must be a number')
  })
})

describe('unescape / encodeArgs', () => {
  it('leaves malformed escapes alone', () => {
    expect(unescape('100%zz')).toBe('100%zz')
  })
  it('encodes sorted, true as a bare name', () => {
    expect(encodeArgs({ b: '2', a: [1, true] })).toBe('a=1&a&b=2')
  })
})
