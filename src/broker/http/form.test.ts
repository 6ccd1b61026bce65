import fc from 'fast-check'
import { parse as fastQuerystring } from 'fast-querystring'
import { describe, expect, it } from 'vitest'
import { parseForm } from './form.js'

// What @fastify/formbody's default parser made of a body: parseForm must make the same, in the same order.
const entries = (fields: object) => Object.entries(fields)

describe('parseForm', () => {
  it('reads names and values, + as a space, percent escapes as UTF-8', () => {
    expect(entries(parseForm('a=1&b=x+y&c=%C3%A9%20z&d'))).toEqual([
      ['a', '1'],
      ['b', 'x y'],
      ['c', 'é z'],
      ['d', ''],
    ])
  })

  it('keeps a repeated name as the list of its values', () => {
    expect(entries(parseForm('a=1&b=2&a=3&a=4'))).toEqual([
      ['a', ['1', '3', '4']],
      ['b', '2'],
    ])
  })

  it('keeps a part whose escapes do not decode as sent', () => {
    expect(entries(parseForm('a=%zz&b=%C3&c=%ED%A0%80&d%=1'))).toEqual([
      ['a', '%zz'],
      ['b', '%C3'],
      ['c', '%ED%A0%80'],
      ['d%', '1'],
    ])
  })

  it('makes __proto__ and constructor fields like any other, on an object without a prototype', () => {
    const fields = parseForm('__proto__=x&constructor=y&toString=z')
    expect(entries(fields)).toEqual([
      ['__proto__', 'x'],
      ['constructor', 'y'],
      ['toString', 'z'],
    ])
    expect(Object.getPrototypeOf(Object.getPrototypeOf(fields))).toBeNull()
  })

  it('reads a body of many parts without = (each = is searched for once, not once per part)', () => {
    const fields = parseForm('a&'.repeat(200_000))
    expect(fields.a).toHaveLength(200_000)
  })

  it('parses any body as fast-querystring does', () => {
    const part = fc.constantFrom(
      ...['a', 'b', 'Z', '=', '&', '+', '%', '2', 'B', 'C', '3', 'A', 'E', 'D', 'F', '0', '8', '9', 'z', ' ', 'é'],
      ...['%26', '%3D', '%2B', '%C3%A9', '%F0%9F%98%80', '%ED%A0%80', '%E2%82', '%C0%AF', '__proto__', '😀', '\u0000'],
    )
    fc.assert(
      fc.property(fc.array(part, { maxLength: 40 }), (parts) => {
        const body = parts.join('')
        expect(entries(parseForm(body))).toEqual(entries(fastQuerystring(body)))
      }),
      { numRuns: 5000 },
    )
  })
})
