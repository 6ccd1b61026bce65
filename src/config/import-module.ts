import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { dirname, extname, join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { Script, runInThisContext } from 'node:vm'

// What Node throws when a `.js` file is written in the other module format than its package.json
// "type" says: a Guardian-style `module.exports` config inside a "type": "module" package, or
// `export default` under "type": "commonjs".
const CJS_IN_ESM = /\b(module|exports|require) is not defined in ES module scope/
const ESM_IN_CJS = /Cannot use import statement outside a module|Unexpected token 'export'/

type Namespace = { default?: unknown } & Record<string, unknown>

/** Imports a config module; a `.js` file may be ESM or CommonJS whatever its package.json says. */
export async function importConfigModule(file: string): Promise<Namespace> {
  // Node's own import of ESM under "type": "commonjs" fails, but prints "To load an ES module, set
  // "type": "module"…" on stderr first, which no catch can take back: such a file is not handed to it.
  if (extname(file) === '.js' && (await packageType(file)) === 'commonjs' && !(await parsesAsCommonJs(file)))
    return esmFromSource(file)
  try {
    return (await import(pathToFileURL(file).href)) as Namespace
  } catch (err) {
    const message = (err as Error).message ?? ''
    if (CJS_IN_ESM.test(message)) return { default: await commonJs(file) }
    if (ESM_IN_CJS.test(message)) return esmFromSource(file)
    throw err
  }
}

async function commonJs(file: string): Promise<unknown> {
  const source = await readFile(file, 'utf8')
  const module = { exports: {} as unknown }
  const wrapper = runInThisContext(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, {
    filename: file,
  }) as (
    exports: unknown,
    require: NodeJS.Require,
    module: { exports: unknown },
    filename: string,
    dirname: string,
  ) => void
  wrapper(module.exports, createRequire(file), module, file, dirname(file))
  return module.exports
}

// Node built-ins (node:os …) import fine from a data: URL; a relative import does not, and says so.
async function esmFromSource(file: string): Promise<Namespace> {
  const source = await readFile(file, 'utf8')
  return (await import(`data:text/javascript;base64,${Buffer.from(source).toString('base64')}`)) as Namespace
}

/** The "type" of the package.json nearest to `file`, as Node reads it: commonjs unless it says module. */
async function packageType(file: string): Promise<'module' | 'commonjs' | undefined> {
  for (let dir = dirname(file); ; dir = dirname(dir)) {
    const text = await readFile(join(dir, 'package.json'), 'utf8').catch(() => undefined)
    if (text !== undefined) {
      try {
        return (JSON.parse(text) as { type?: unknown }).type === 'module' ? 'module' : 'commonjs'
      } catch {
        return undefined
      }
    }
    if (dirname(dir) === dir) return undefined
  }
}

/** Whether the file's source compiles as a CommonJS module body (only compiled, never run). */
async function parsesAsCommonJs(file: string): Promise<boolean> {
  const source = await readFile(file, 'utf8')
  try {
    new Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, { filename: file })
    return true
  } catch {
    return false
  }
}
