import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { FIXTURE_TYPES, fixtureTypesSource } from '../scripts/fixture-types.js'

describe('pdk/fixture-types.generated.ts', () => {
  it('is what scripts/fixture-types.ts writes from pdk/fixture.schema.json', async () => {
    // On a failure: npm run gen:fixture-types (node --import tsx scripts/fixture-types.ts)
    expect(readFileSync(FIXTURE_TYPES, 'utf8')).toBe(await fixtureTypesSource())
  })

  it('types an annotation-only schema (request.body) as unknown, as JSON Schema reads it', async () => {
    const text = await fixtureTypesSource()
    const request = text.slice(text.indexOf('  request: {'), text.indexOf('  upstream?: {'))
    expect(request).toMatch(/\n {4}body\?: unknown\n/)
  })
})
