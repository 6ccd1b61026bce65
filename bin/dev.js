#!/usr/bin/env -S node --import tsx
// Runs the CLI straight from the TypeScript sources (commands/, src/, …) without a build.
import { execute } from '@oclif/core'

// oclif.manifest.json describes the built commands; older than a command's source it would hide
// new commands and flags here, so it goes (bin/run.js or `npm run build` writes it again).
const { dropManifestIfOlderThan } = await import('../scripts/manifest.js')
dropManifestIfOlderThan('commands')

await execute({ development: true, dir: import.meta.url })
