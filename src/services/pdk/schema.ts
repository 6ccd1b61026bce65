/** `broker pdk schema`: where the fixture JSON Schema of this copy of broker is, for a fixture's `"$schema"`. */
import { existsSync, readFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

export interface PdkSchemaResult {
  /** Absolute path of pdk/fixture/fixture.schema.json in this installed copy (or checkout). */
  path: string
  /** The same as a file: URL, which editors take in `"$schema"` too. */
  url: string
  /** The schema's own `$id`. */
  id: string
}

const here = dirname(fileURLToPath(import.meta.url))
// Built, this file is dist/src/services/pdk/schema.js (the package root four folders up); run from
// the sources, src/services/pdk/schema.ts (three up). The schema is shipped at the root's pdk/fixture/.
const CANDIDATES = [
  resolve(here, '../../../../pdk/fixture/fixture.schema.json'),
  resolve(here, '../../../pdk/fixture/fixture.schema.json'),
]

/** The fixture schema's path in this copy, its file: URL and `$id`. */
export function fixtureSchema(): PdkSchemaResult {
  const path = CANDIDATES.find((p) => existsSync(p) && isFixtureSchema(p)) ?? CANDIDATES[0]!
  const { $id } = JSON.parse(readFileSync(path, 'utf8')) as { $id: string }
  return { path, url: pathToFileURL(path).href, id: $id }
}

/** The schema text itself (`--print`). */
export const fixtureSchemaText = (path: string): string => readFileSync(path, 'utf8')

// A folder above a source checkout may hold another pdk/ (a sibling project): take only ours.
function isFixtureSchema(path: string): boolean {
  try {
    return (JSON.parse(readFileSync(path, 'utf8')) as { title?: string }).title === 'broker pdk run fixture'
  } catch {
    return false
  }
}
