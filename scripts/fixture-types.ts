/**
 * Writes pdk/fixture/fixture-types.generated.ts, the TypeScript types of a PDK fixture, from the one source of the
 * format: pdk/fixture/fixture.schema.json (json-schema-to-typescript, a dev dependency: the built and installed
 * copies only carry the generated file). pdk/fixture/index.ts narrows them where JSON Schema cannot say it.
 *
 *   npm run gen:fixture-types                            # the same as node --import tsx scripts/fixture-types.ts
 *   node --import tsx scripts/fixture-types.ts --check   # exits 1 when the checked-in file is not what it writes
 *
 * pdk/fixture/fixture-types.test.ts runs the same comparison, so the types cannot drift from the schema.
 */
import { compile, type JSONSchema } from 'json-schema-to-typescript'
import { format, resolveConfig } from 'prettier'
import { readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
export const FIXTURE_SCHEMA = join(root, 'pdk', 'fixture', 'fixture.schema.json')
export const FIXTURE_TYPES = join(root, 'pdk', 'fixture', 'fixture-types.generated.ts')

const BANNER = `/* generated — do not edit; run npm run gen:fixture-types (scripts/fixture-types.ts) after changing
 * pdk/fixture/fixture.schema.json. pdk/fixture/fixture-types.test.ts fails while this file differs from what
 * it writes. */`

/** Keywords that say nothing about what a value may be. */
const ANNOTATIONS = new Set(['description', 'title', 'default', 'examples', '$comment'])

/** Where a schema holds other schemas: one, a list of them, or a map of names to them. */
const ONE = ['items', 'additionalProperties', 'propertyNames', 'not', 'if', 'then', 'else', 'contains']
const LISTS = ['oneOf', 'anyOf', 'allOf']
const MAPS = ['properties', 'patternProperties', 'definitions']

/**
 * JSON Schema reads a schema with only annotations (`request.body`: a description) as "any value";
 * json-schema-to-typescript reads it as an object. Such schemas are typed `unknown` here, in memory only.
 */
function annotationsAsUnknown(schema: JSONSchema): void {
  const keys = Object.keys(schema)
  if (keys.length > 0 && keys.every((k) => ANNOTATIONS.has(k))) schema.tsType = 'unknown'
  const at = schema as Record<string, unknown>
  const subs = [
    ...ONE.map((k) => at[k]),
    ...LISTS.flatMap((k) => (Array.isArray(at[k]) ? at[k] : [])),
    ...MAPS.flatMap((k) => (at[k] && typeof at[k] === 'object' ? Object.values(at[k]) : [])),
    ...(Array.isArray(at.items) ? at.items : []),
  ]
  for (const sub of subs) if (sub && typeof sub === 'object' && !Array.isArray(sub)) annotationsAsUnknown(sub)
}

/** The text of pdk/fixture/fixture-types.generated.ts for the schema as it is now. */
export async function fixtureTypesSource(): Promise<string> {
  const schema = JSON.parse(readFileSync(FIXTURE_SCHEMA, 'utf8')) as JSONSchema
  const id = schema.$id
  annotationsAsUnknown(schema)
  const code = await compile(schema, 'Fixture', {
    bannerComment: BANNER,
    // the root is `Fixture` (its title is for editors); other names come from the schema's titles and definitions
    customName: (s) => (s.$id === id ? 'Fixture' : undefined),
    // every $ref is inside the schema: nothing is read from disk or the network
    $refOptions: { resolve: { external: false, file: false, http: false } },
    additionalProperties: true,
    unknownAny: true,
    format: false,
  })
  // formatted as the repository's prettier config says, so `prettier --check` agrees with the generator
  const style = (await resolveConfig(FIXTURE_TYPES)) ?? {}
  return format(code, { ...style, filepath: FIXTURE_TYPES })
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const text = await fixtureTypesSource()
  if (process.argv.includes('--check')) {
    if (readFileSync(FIXTURE_TYPES, 'utf8') !== text) {
      process.stderr.write(
        'pdk/fixture/fixture-types.generated.ts differs from the schema: run npm run gen:fixture-types\n',
      )
      process.exit(1)
    }
  } else writeFileSync(FIXTURE_TYPES, text)
}
