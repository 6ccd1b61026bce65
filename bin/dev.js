#!/usr/bin/env -S node --import tsx
// Runs the CLI straight from the TypeScript sources (commands/, src/, …) without a build.
import { execute } from '@oclif/core'

await execute({ development: true, dir: import.meta.url })
