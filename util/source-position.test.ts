import { describe, expect, it } from 'vitest'
import { jsonErrorIndex, jsonErrorMessage, lineColumn } from './source-position.js'

const parseError = (text: string): unknown => {
  try {
    JSON.parse(text)
  } catch (err) {
    return err
  }
  throw new Error('valid JSON')
}

describe('JSON errors as line and column', () => {
  it('finds the first bad character of invalid JSON, and none in valid JSON', () => {
    for (const text of ['{}', '[1, -2.5e3, "a\\u00e9\\n", true, false, null, {"a": [{}]}]', ' "x" ', '0'])
      expect(jsonErrorIndex(text), text).toBeUndefined()
    expect(jsonErrorIndex('{"a": 1,}')).toBe(8)
    expect(jsonErrorIndex("{'a': 1}")).toBe(1)
    expect(jsonErrorIndex('{"a": tru}')).toBe(9)
    expect(jsonErrorIndex('[1, 2')).toBe(5)
    expect(jsonErrorIndex('{"a": "\\x"}')).toBe(8)
    expect(jsonErrorIndex('{"a": 1} x')).toBe(9)
    expect(jsonErrorIndex('[01]')).toBe(2)
    expect(jsonErrorIndex('"tab\there"')).toBe(4)
  })

  it("points where V8 points whenever V8's message gives a position, numbers cut short included", () => {
    const texts = ['{"a": 1.}', '{"a": -}', '{"a": 1e}', '{"a": 1e+}', '[-.5]', '[1.e3]', '{"a": 1 "b": 2}']
    texts.push('{"a": "x\n"}', '{"a": 01}', '{"a": "\\u12G4"}', '"abc', '{"a": 1}}', '[1 2]', '   ', '')
    let compared = 0
    for (const text of texts) {
      const position = /at position (\d+)/.exec(String((parseError(text) as Error).message))?.[1]
      if (position === undefined) continue
      compared++
      expect(jsonErrorIndex(text), text).toBe(Number(position))
    }
    expect(compared).toBeGreaterThan(8)
  })

  it('says where, in lines and columns, with what JSON.parse said', () => {
    const text = '{\n  "port": 4000,\n  "store": { "driver": "memory", }\n}\n'
    expect(jsonErrorMessage(text, parseError(text))).toBe('Expected double-quoted property name at line 3, column 34')
    const truncated = '{\n  "name": '
    expect(jsonErrorMessage(truncated, parseError(truncated))).toBe('Unexpected end of the text at line 2, column 11')
    // V8 quotes the text in some messages: the quote goes, the place stays.
    const word = '{\n "a": nope\n}'
    expect(jsonErrorMessage(word, parseError(word))).toBe("Unexpected token 'o' at line 2, column 8")
  })

  it('counts lines over \\n, \\r\\n and \\r, columns from 1', () => {
    expect(lineColumn('ab\r\ncd\ref', 9)).toEqual({ line: 3, column: 3 })
    expect(lineColumn('abc', 0)).toEqual({ line: 1, column: 1 })
  })
})
