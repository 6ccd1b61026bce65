#!/usr/bin/env node
// Writes dist/pdk/fixture/fixture.validate.cjs: the PDK fixture schema compiled once, at build, into a
// standalone validator (Ajv's standalone code). Compiling the schema took ~280 ms of CPU on every
// `broker pdk run`; loading the compiled one takes ~12 ms. The file carries the schema's digest;
// pdk/fixture/index.ts compiles the schema itself when the digest differs (a schema edited since).
import { createHash } from 'node:crypto'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const require = createRequire(import.meta.url)
const { Ajv } = require('ajv')
const standalone = require('ajv/dist/standalone').default

const text = readFileSync(join(root, 'pdk', 'fixture', 'fixture.schema.json'), 'utf8')
// The same options pdk/fixture/index.ts compiles with.
const ajv = new Ajv({ allErrors: true, strict: false, code: { source: true } })
const code = standalone(ajv, ajv.compile(JSON.parse(text)))
const digest = createHash('sha256').update(text).digest('hex')
const out = join(root, 'dist', 'pdk', 'fixture', 'fixture.validate.cjs')
mkdirSync(dirname(out), { recursive: true })
writeFileSync(out, `${code}\nmodule.exports.schemaDigest = ${JSON.stringify(digest)};\n`)
