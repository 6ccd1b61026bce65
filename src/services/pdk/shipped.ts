import { existsSync, readdirSync } from 'node:fs'
import { isAbsolute, join, normalize, sep } from 'node:path'
import { closest } from '../../../util/closest.js'
import { brokerError } from '../../errors/index.js'

/** The fixtures shipped with broker: `fixtures/pdk/` in its package (a checkout, or an installed copy). */
export const shippedFixtures = (packageRoot: string): string => join(packageRoot, 'fixtures', 'pdk')

/**
 * A fixture path as given, or the shipped fixture it names when nothing is there in the current
 * folder: a bare name (`js-hello`, `js-hello.json`, `kong`), or a path under `fixtures/pdk/` as the
 * README writes them, so that an installed copy runs the README's examples anywhere. A bare name
 * that is none of them is FIXTURE_INVALID with the closest shipped name and where they are.
 */
export function resolveShipped(path: string, shipped: string, cwd = process.cwd()): string {
  if (isAbsolute(path) || existsSync(join(cwd, path))) return path
  const relative = normalize(path).split(sep)
  const rest = relative[0] === 'fixtures' && relative[1] === 'pdk' ? relative.slice(2) : undefined
  if (rest) return existsSync(join(shipped, ...rest)) ? join(shipped, ...rest) : path
  // A path that names a folder is the user's own: the loader says it cannot be read.
  if (relative.length > 1 || /[*?[]/.test(path)) return path
  for (const candidate of [path, `${path}.json`])
    if (existsSync(join(shipped, candidate))) return join(shipped, candidate)
  const names = existsSync(shipped) ? readdirSync(shipped).map((n) => n.replace(/\.json$/, '')) : []
  throw brokerError('shippedFixtureUnknown', {
    name: path,
    folder: shipped,
    suggestion: closest(path.replace(/\.json$/, ''), names),
  })
}
