#!/usr/bin/env node
const root = new URL('..', import.meta.url)
const args = process.argv.slice(2)

// `broker serve` runs its primary from a small entry that loads none of the CLI: the CLI resolves the
// config in a child process and hands it over (dist/src/cli/serve-main.js). That child is this same
// script, told by BROKER_SERVE_HANDOVER to go on below.
if (args[0] === 'serve' && !process.env.BROKER_SERVE_HANDOVER) {
  const { main } = await import(new URL('dist/src/cli/serve-main.js', root).href)
  await main(process.argv[1], args.slice(1))
} else if (!(args[0] === '--version' && (await version()))) await cli()

/**
 * `broker --version` without loading oclif: the line oclif prints (its config's userAgent), read from
 * package.json. Under WSL oclif says `wsl` where Node says `linux`; there (or when unsure) oclif answers.
 */
async function version() {
  const [{ readFileSync, existsSync }, { arch, release }] = await Promise.all([import('node:fs'), import('node:os')])
  if (process.platform === 'linux') {
    const wsl = (text) => text.toLowerCase().includes('microsoft')
    const proc = (() => {
      try {
        return readFileSync('/proc/version', 'utf8')
      } catch {
        return ''
      }
    })()
    if (wsl(release()) || wsl(proc) || existsSync('/proc/sys/fs/binfmt_misc/WSLInterop') || existsSync('/run/WSL'))
      return false
  }
  const { name, version } = JSON.parse(readFileSync(new URL('package.json', root), 'utf8'))
  process.stdout.write(
    `${name}/${version} ${process.platform}-${arch() === 'ia32' ? 'x86' : arch()} node-${process.version}\n`,
  )
  return true
}

async function cli() {
  // The subpath entry points load a third less of @oclif/core than its index does: start-up is
  // most of what `broker --version` or `broker help` costs.
  const [{ execute }, { settings }] = await Promise.all([import('@oclif/core/execute'), import('@oclif/core/settings')])

  // The built CLI runs dist/ only: never let oclif look for TypeScript sources to transpile
  // (it would under NODE_ENV=test or development whenever a ts-node happens to be installed).
  settings.enableAutoTranspile = false

  // In a checkout, a `tsc` run after the last `npm run build` leaves oclif.manifest.json older than
  // dist/: the manifest is written again first, so help and command lookup never describe old code.
  // An installed package ships both together and skips this (scripts/ is not packed).
  const stale = await import(new URL('scripts/manifest.js', root).href).then(
    (m) => m.refreshIfStale,
    () => undefined,
  )
  if (stale) await stale()

  await execute({ dir: import.meta.url })
}
