/**
 * What a `broker pdk test` run covers, as busted decides it: the spec files under the paths given
 * (`spec/` by default) whose names match the pattern (a Lua pattern, `_spec` by default; `.lua`
 * files only), and a `.busted` file's task (`default`) for the options the command line leaves out.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'
import { createVm } from './pdk.js'

/** Why a run cannot start: the path or file at fault and what is wrong with it. */
export class SpecUsageError extends Error {
  constructor(
    readonly kind: 'not-found' | 'no-specs' | 'busted-file',
    readonly path: string,
    message: string,
  ) {
    super(message)
  }
}

/** A Lua pattern as a JS RegExp: the classes and escapes file patterns use (`%a %d %w %s %l %u %p %.`). */
export function luaPattern(pattern: string): RegExp {
  const classes: Record<string, string> = {
    a: '[A-Za-z]',
    d: '\\d',
    w: '[A-Za-z0-9]',
    s: '\\s',
    l: '[a-z]',
    u: '[A-Z]',
    p: '[!-/:-@[-`{-~]',
    x: '[0-9A-Fa-f]',
  }
  let out = ''
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!
    if (c === '%' && i + 1 < pattern.length) {
      const n = pattern[++i]!
      out += classes[n] ?? classes[n.toLowerCase()]?.replace('[', '[^') ?? n.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&')
    } else if (c === '-') out += '*?'
    else out += c
  }
  return new RegExp(out)
}

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .flatMap((e) => (e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)]))
}

/** The spec files of a run, relative to the root, in name order; named files are taken as they are. */
export function findSpecFiles(root: string, paths: readonly string[], pattern: string): string[] {
  const re = luaPattern(pattern)
  const out: string[] = []
  for (const p of paths) {
    const abs = resolve(root, p)
    if (!existsSync(abs)) throw new SpecUsageError('not-found', p, `${p} does not exist in the current folder`)
    const files = statSync(abs).isDirectory()
      ? walk(abs).filter((f) => f.endsWith('.lua') && re.test(f.slice(f.lastIndexOf('/') + 1)))
      : [abs]
    out.push(...files.map((f) => relative(root, f)))
  }
  if (!out.length)
    throw new SpecUsageError(
      'no-specs',
      paths.join(', '),
      `No spec file in ${paths.join(', ')}: none of its .lua files matches the pattern ${pattern}`,
    )
  return [...new Set(out)]
}

/** The options of a `.busted` task that a run reads (busted's names). */
export interface BustedTask {
  ROOT?: string[]
  pattern?: string
  tags?: string[]
  'exclude-tags'?: string[]
  filter?: string[]
  'filter-out'?: string[]
  output?: string
  lazy?: boolean
  lpath?: string
}

const listOf = (v: unknown): string[] | undefined =>
  v === undefined
    ? undefined
    : (Array.isArray(v) ? v.map(String) : [String(v)]).flatMap((s) => s.split(',')).filter((s) => s !== '')

/** The `.busted` file's task `name` (busted's `default` unless --run names another); {} without a file. */
export async function readBustedFile(root: string, task = 'default'): Promise<BustedTask> {
  const file = join(root, '.busted')
  if (!existsSync(file)) return {}
  const vm = await createVm({ heapLimit: 16 * 1024 * 1024 })
  let tasks: unknown
  try {
    ;[tasks] = vm.run(readFileSync(file), '@.busted')
  } catch (e) {
    throw new SpecUsageError('busted-file', file, `.busted does not run: ${(e as Error).message}`)
  } finally {
    vm.close()
  }
  if (!tasks || typeof tasks !== 'object')
    throw new SpecUsageError('busted-file', file, '.busted must return a table of tasks ({ default = { … } })')
  const t = (tasks as Record<string, unknown>)[task]
  if (t === undefined) {
    if (task === 'default') return {}
    throw new SpecUsageError('busted-file', file, `.busted has no task "${task}" (--run)`)
  }
  const o = t as Record<string, unknown>
  return {
    ROOT: listOf(o.ROOT),
    pattern: o.pattern === undefined ? undefined : String(o.pattern),
    tags: listOf(o.tags),
    'exclude-tags': listOf(o['exclude-tags']),
    filter: listOf(o.filter),
    'filter-out': listOf(o['filter-out']),
    output: o.output === undefined ? undefined : String(o.output),
    lazy: o.lazy === undefined ? undefined : Boolean(o.lazy),
    lpath: o.lpath === undefined ? undefined : String(o.lpath),
  }
}
