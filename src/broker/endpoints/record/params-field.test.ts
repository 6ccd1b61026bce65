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

  it('refuses client authentication parameters in any spelling (one app could drop the client every app shares)', () => {
    for (const bad of [
      { client_secret: 'x' },
      '{"client_id":"other"}',
      'a=1&client_assertion=eyJ',
      { client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer' },
    ])
      expect(normalizeParams(bad), JSON.stringify(bad)).toMatchObject({
        problem: expect.stringMatching(/may not carry client_/),
      })
    expect(normalizeParams({ audience: 'x' })).toEqual({ value: { audience: 'x' } })
  })
})
