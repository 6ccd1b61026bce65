import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { describe, expect, it } from 'vitest'

// No import circles in the code: a module that reaches itself through its imports cannot be read top to
// bottom, and its load order decides which half sees the other undefined. Type-only imports and
// dynamic import() count too: a reader follows them the same way. Tests may import anything.

const root = join(import.meta.dirname, '..')
const LAYERS = ['commands', 'src', 'flows', 'pdk', 'util']

function sources(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name)
    if (e.isDirectory()) return sources(path)
    return /\.tsx?$/.test(e.name) && !/\.test\.tsx?$/.test(e.name) ? [path] : []
  })
}

// `… from './x.js'`, `import('./x.js')`, `import './x.js'`: relative specifiers only (packages cannot close a circle)
const SPECIFIER =
  /\bfrom\s+['"](\.{1,2}\/[^'"]+)['"]|\bimport\s*\(\s*['"](\.{1,2}\/[^'"]+)['"]|^\s*import\s+['"](\.{1,2}\/[^'"]+)['"]/gm

/** The source files `file` imports, as paths from the root (`.js` written for a `.ts` or `.tsx` file). */
function importsOf(file: string): string[] {
  const text = readFileSync(join(root, file), 'utf8')
  return [...text.matchAll(SPECIFIER)].flatMap((m) => {
    const target = join(dirname(file), (m[1] ?? m[2] ?? m[3])!)
    const found = [target.replace(/\.js$/, '.ts'), target.replace(/\.js$/, '.tsx'), target].find(
      (p) => /\.tsx?$/.test(p) && existsSync(join(root, p)),
    )
    return found ? [found] : []
  })
}

/** Strongly connected components of more than one file, or a file importing itself (Tarjan). */
function circles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const out: string[][] = []
  const visit = (v: string) => {
    index.set(v, index.size)
    low.set(v, index.get(v)!)
    stack.push(v)
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w)
        low.set(v, Math.min(low.get(v)!, low.get(w)!))
      } else if (stack.includes(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!))
    }
    if (low.get(v) !== index.get(v)) return
    const component: string[] = []
    let w: string
    do component.push((w = stack.pop()!))
    while (w !== v)
    if (component.length > 1 || graph.get(v)!.includes(v)) out.push(component.sort())
  }
  for (const v of graph.keys()) if (!index.has(v)) visit(v)
  return out
}

describe('imports', () => {
  it(`form no circle in ${LAYERS.join('/, ')}/`, () => {
    const graph = new Map(LAYERS.flatMap(sources).map((f) => [f, importsOf(f)]))
    expect(graph.size).toBeGreaterThan(100)
    expect(circles(graph), 'each list is files that import one another in a circle').toEqual([])
  })
})
