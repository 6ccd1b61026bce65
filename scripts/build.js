#!/usr/bin/env node
// `npm run build`'s first step: dist/ from the sources, one .js per .ts/.tsx, the same layout and ES module
// code tsc would emit, with esbuild (decision record 0013). Types are checked by `npm run typecheck`
// (CI runs it before the tests); building them again took 14 s of the test command's time and 24 s of
// CPU in the package test's `npm pack`, against about 1 s here.
import { readdirSync, rmSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
// tsconfig.build.json's "include" and "exclude": the shipped code, no tests.
const FOLDERS = ['commands', 'src', 'flows', 'pdk', 'util']
const shipped = (name) => /\.tsx?$/.test(name) && !/\.test\.tsx?$/.test(name) && !name.endsWith('.d.ts')

/** Every source file under `dir`, relative to the checkout. */
function sources(dir) {
  return readdirSync(join(root, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && shipped(e.name))
    .map((e) => relative(root, join(e.parentPath, e.name)))
}

// A file removed from the sources leaves no module behind in dist/.
rmSync(join(root, 'dist'), { recursive: true, force: true })
await build({
  absWorkingDir: root,
  entryPoints: FOLDERS.flatMap(sources),
  outdir: 'dist',
  outbase: '.',
  format: 'esm',
  platform: 'node',
  target: 'node20',
  // tsconfig.json's "jsx": "react-jsx", and its ES2022 class fields.
  tsconfig: 'tsconfig.build.json',
  jsx: 'automatic',
  logLevel: 'warning',
})
