import { existsSync } from 'node:fs'
import { join, resolve } from 'node:path'

/**
 * The folder the PDK panel lists: --fixtures when given, else fixtures/pdk under the current folder
 * (a checkout), else the fixtures shipped in the package (an installed copy run anywhere, whose
 * panel was empty). The panel shows the folder, so the user sees which one it is.
 */
export function fixturesDir(given: string | undefined, cwd: string, packageRoot: string): string {
  if (given !== undefined) return given
  const local = 'fixtures/pdk'
  return existsSync(resolve(cwd, local)) ? local : join(packageRoot, 'fixtures', 'pdk')
}
