import { describe, expect, it } from 'vitest'
import { argVariable, checkLimit, decodeArgs, encodeArgs, unescape, unescapeBytes } from './args.js'

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
  it('leaves out a part whose key decodes to nothing, with or without a value', () => {
    expect(decodeArgs('=x&&=&b&%2B=p', 100).args).toEqual({ b: true, '+': 'p' })
  })
  it('counts max as arguments kept (get_uri_args) or as parts, empty ones too (decode_args)', () => {
    expect(decodeArgs('a&&b&c', 2, 'args')).toEqual({ args: { a: true, b: true }, truncated: true })
    expect(decodeArgs('a&&b&c', 2, 'parts')).toEqual({ args: { a: true }, truncated: true })
    expect(decodeArgs('a&b&', 2, 'parts')).toEqual({ args: { a: true, b: true }, truncated: false })
    expect(decodeArgs('a&b&c', 0, 'parts').args).toEqual({ a: true, b: true, c: true })
    expect(decodeArgs('a&b&c', 0, 'args').args).toEqual({ a: true, b: true, c: true })
  })
})

describe('unescapeBytes', () => {
  it('decodes %XX to its byte, keeps a malformed %, and + as a space when asked', () => {
    expect(unescapeBytes(Buffer.from('%ff%4%zz%41+'))).toEqual(
      Buffer.from([0xff, 0x25, 0x34, 0x25, 0x7a, 0x7a, 0x41, 0x20]),
    )
    expect(unescapeBytes(Buffer.from('a+b'), false).toString()).toBe('a+b')
  })
})

describe('argVariable ($arg_<name>)', () => {
  it('gives the first value whatever the case of its name, undecoded; nothing for a bare name', () => {
    expect(argVariable('X=%41&x=2&flag', 'x')).toBe('%41')
    expect(argVariable('X=%41&x=2&flag', 'flag')).toBeUndefined()
    expect(argVariable('ab=1', 'a')).toBeUndefined()
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
