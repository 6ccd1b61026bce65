import { describe, expect, it } from 'vitest'
import { normalizeParams } from './params-field.js'

describe('normalizeParams', () => {
  it('reads JSON text as the object it spells', () => {
    expect(normalizeParams('{"prompt":"consent","max_age":0}')).toEqual({ value: { prompt: 'consent', max_age: 0 } })
    expect(normalizeParams('  {"prompt":"consent"} ')).toEqual({ value: { prompt: 'consent' } })
  })

  it('keeps a query string and an object of text values as they are', () => {
    expect(normalizeParams('prompt=consent&access_type=offline')).toEqual({
      value: 'prompt=consent&access_type=offline',
    })
    expect(normalizeParams({ prompt: 'consent' })).toEqual({ value: { prompt: 'consent' } })
  })

  it('names what is wrong with anything else', () => {
    for (const bad of ['{"prompt":', '["prompt"]', '{"a":{"b":1}}', 'consent', 5, ['a'], { a: ['x'] }])
      expect(normalizeParams(bad), JSON.stringify(bad)).toMatchObject({ problem: expect.stringMatching(/must be/) })
  })
})
