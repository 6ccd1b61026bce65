#!/usr/bin/env node
import { execute, settings } from '@oclif/core'

// The built CLI runs dist/ only: never let oclif look for TypeScript sources to transpile
// (it would under NODE_ENV=test or development whenever a ts-node happens to be installed).
settings.enableAutoTranspile = false

await execute({ dir: import.meta.url })
