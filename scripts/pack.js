#!/usr/bin/env node
// `npm pack` / `npm publish` hooks. prepack builds dist/ (tsc is a dev dependency, so a fresh
// clone must run `npm ci` first: said here instead of npm's bare `tsc: not found`) and writes
// npm-shrinkwrap.json from package-lock.json: `overrides` apply only to this checkout, so an
// installed copy would otherwise resolve a tree nobody tested (light-my-request 6.8 pulls
// cookie 2, which needs Node 22). npm honours a shipped shrinkwrap when it installs a CLI;
// postpack removes it again so package-lock.json stays the one lockfile in the repository.
import { execFileSync } from 'node:child_process'
import { copyFileSync, existsSync, rmSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const shrinkwrap = join(root, 'npm-shrinkwrap.json')

/** The reason packing cannot start here, or undefined. */
export function missingBuildTools(dir = root) {
  if (!existsSync(join(dir, 'node_modules', 'typescript', 'package.json')))
    return 'npm pack builds dist/ first and needs the dev dependencies: run `npm ci`, then `npm pack` again.'
  return undefined
}

const step = process.argv[2]
if (step === 'prepack') {
  const missing = missingBuildTools()
  if (missing) {
    process.stderr.write(`${missing}\n`)
    process.exit(1)
  }
  execFileSync('npm', ['run', 'build', '--silent'], { cwd: root, stdio: 'inherit' })
  copyFileSync(join(root, 'package-lock.json'), shrinkwrap)
} else if (step === 'postpack') {
  rmSync(shrinkwrap, { force: true })
}
