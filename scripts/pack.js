#!/usr/bin/env node
// `npm pack` / `npm publish`'s prepack: builds dist/. The build's esbuild is a dev dependency, so a fresh
// clone must run `npm ci` first; said here instead of npm's bare "Cannot find package 'esbuild'".
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')

if (!existsSync(join(root, 'node_modules', 'esbuild', 'package.json'))) {
  process.stderr.write(
    'npm pack builds dist/ first and needs the dev dependencies: run `npm ci`, then `npm pack` again.\n',
  )
  process.exit(1)
}
execFileSync('npm', ['run', 'build', '--silent'], { cwd: root, stdio: 'inherit' })
