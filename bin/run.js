#!/usr/bin/env node
// The subpath entry points load a third less of @oclif/core than its index does: start-up is
// most of what `broker --version` or `broker help` costs.
import { execute } from '@oclif/core/execute'
import { settings } from '@oclif/core/settings'

// The built CLI runs dist/ only: never let oclif look for TypeScript sources to transpile
// (it would under NODE_ENV=test or development whenever a ts-node happens to be installed).
settings.enableAutoTranspile = false

// In a checkout, a `tsc` run after the last `npm run build` leaves oclif.manifest.json older than
// dist/: the manifest is written again first, so help and command lookup never describe old code.
// An installed package ships both together and skips this (scripts/ is not packed).
const root = new URL('..', import.meta.url)
const stale = await import(new URL('scripts/manifest.js', root).href).then(
  (m) => m.refreshIfStale,
  () => undefined,
)
if (stale) await stale()

await execute({ dir: import.meta.url })
