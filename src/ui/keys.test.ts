import type { Key } from 'ink'
import { describe, expect, it } from 'vitest'
import { splitChunk } from './keys.js'

const none = { return: false } as Key

describe('splitChunk', () => {
  it('splits text typed with its Enter into text and an Enter press', () => {
    expect(splitChunk('abc\rdef\r', none).map(([input, key]) => [input, key.return])).toEqual([
      ['abc', false],
      ['', true],
      ['def', false],
      ['', true],
    ])
  })

  it('leaves a single key alone', () => {
    expect(splitChunk('a', none)).toEqual([['a', none]])
    expect(splitChunk('\r', { return: true } as Key)).toEqual([['\r', { return: true }]])
  })
})
