#!/usr/bin/env node
// Writes oclif.manifest.json: every command's id, summary, flags and args, read once from the
// built commands (dist/commands), so `broker --version` or `broker help` import no command and a
// command imports only its own module. `oclif manifest` does the same through the `oclif` package,
// which brings hundreds of dependencies (AWS SDK, yeoman …) for this one step; @oclif/core's own
// Plugin builds the identical manifest when told to ignore an existing one.
import { readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const manifestFile = join(root, 'oclif.manifest.json')

/** Writes the manifest from dist/commands (atomically: several CLIs may start at once). */
export async function writeManifest() {
  const { Plugin, settings } = await import('@oclif/core')
  settings.enableAutoTranspile = false
  const plugin = new Plugin({ root, type: 'core', isRoot: true, ignoreManifest: true, errorOnManifestCreate: true })
  await plugin.load()
  const tmp = `${manifestFile}.${process.pid}.tmp`
  writeFileSync(tmp, JSON.stringify(plugin.manifest, null, 2) + '\n')
  renameSync(tmp, manifestFile)
  return Object.keys(plugin.manifest.commands).length
}

const mtime = (file) => {
  try {
    return statSync(file).mtimeMs
  } catch {
    return -1
  }
}

/** The newest modification time under `dir` (relative to the root), -1 when it does not exist. */
function newestIn(dir) {
  const abs = join(root, dir)
  let newest = mtime(abs)
  if (newest < 0) return newest
  for (const entry of readdirSync(abs, { recursive: true })) newest = Math.max(newest, mtime(join(abs, entry)))
  return newest
}

/** In a checkout: writes the manifest again when a build left dist/commands newer than it. */
export async function refreshIfStale() {
  const newest = newestIn(join('dist', 'commands'))
  if (newest >= 0 && mtime(manifestFile) < newest) await writeManifest()
}

/** Removes the manifest when a file under `dir` is newer (bin/dev.js: the command sources). */
export function dropManifestIfOlderThan(dir) {
  const made = mtime(manifestFile)
  if (made >= 0 && made < newestIn(dir)) rmSync(manifestFile, { force: true })
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const count = await writeManifest()
  process.stderr.write(`oclif.manifest.json: ${count} commands\n`)
}
