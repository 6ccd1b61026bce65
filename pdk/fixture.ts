/** Loading and validating fixture files; errors name the file and the JSON path of the bad field. */
import type { Ajv as AjvClass, ErrorObject, ValidateFunction } from 'ajv'
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import type * as Generated from './fixture-types.generated.js'
import type { ScriptCall } from './fixture-types.generated.js'
import type { Phase } from './phases.js'
import { jsonErrorMessage } from './source-position.js'

// The fixture's types are generated from pdk/fixture.schema.json (npm run gen:fixture-types); what
// JSON Schema cannot say is narrowed here.
export type { Expectations, Matcher, ScriptCall } from './fixture-types.generated.js'

/** A plugin given by its code: a kong-js-pdk module, or a Kong Lua plugin's folder or handler.lua. */
export type ModulePluginSpec = Generated.ModulePlugin & { phases?: undefined }

/** A call-script plugin: its calls by phase (the schema checks the phase names with `propertyNames`). */
export type ScriptPluginSpec = Omit<Generated.CallScriptPlugin, 'phases'> & {
  phases: Partial<Record<Phase, ScriptCall[]>>
  module?: undefined
  plugin_server?: undefined
}

/** One entry of `plugins`: a module plugin when `module` is set, else a call script. */
export type PluginSpec = ModulePluginSpec | ScriptPluginSpec

/** A valid fixture, as `loadFixture` returns it. */
export type Fixture = Omit<Generated.Fixture, 'plugins'> & { plugins: PluginSpec[] }

// The schema's phase names are pdk/phases.ts's: a compile error here when one side gains a phase.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
type Holds<T extends true> = T
type _PhasesAgree = Holds<Same<Generated.Phase, Phase>>

/** A fixture with where it came from. */
export interface LoadedFixture {
  file: string
  dir: string
  fixture: Fixture
}

/** Why a fixture cannot run: the file, the JSON path of the bad field, and what is wrong. */
export class FixtureError extends Error {
  constructor(
    readonly file: string,
    readonly path: string,
    readonly reason: string,
    /**
     * What kind of problem, when not the fixture's shape: an unreadable file (nothing in it to fix), a
     * plugin config its schema refuses, an unemulated module, a module on none of the Lua roots, an
     * outbound HTTP call no `outbound` entry answers.
     */
    readonly kind?: 'unreadable' | 'config' | 'module' | 'lua-path' | 'outbound',
  ) {
    super(`${file}: ${path}: ${reason}`)
    this.name = 'FixtureError'
  }
}

const SCHEMA_PATH = resolve(dirname(fileURLToPath(import.meta.url)), 'fixture.schema.json')
// the schema sits beside the sources; a build copies only .ts, so fall back to the source tree
const schemaText = (): string => {
  try {
    return readFileSync(SCHEMA_PATH, 'utf8')
  } catch {
    return readFileSync(resolve(dirname(SCHEMA_PATH), '../../pdk/fixture.schema.json'), 'utf8')
  }
}

// Compiling the schema costs ~280 ms of CPU per run: the build writes it compiled
// (scripts/fixture-validator.js → fixture.validate.cjs beside this file), used while its digest
// matches the schema's; otherwise (sources run directly, a schema edited since) Ajv compiles it here.
const require = createRequire(import.meta.url)
function compiledSchema(): ValidateFunction {
  const text = schemaText()
  try {
    const compiled = require('./fixture.validate.cjs') as ValidateFunction & { schemaDigest?: string }
    if (compiled.schemaDigest === createHash('sha256').update(text).digest('hex')) return compiled
  } catch {
    // not built
  }
  const { Ajv } = require('ajv') as { Ajv: typeof AjvClass }
  return new Ajv({ allErrors: false, strict: false }).compile(JSON.parse(text) as object)
}
let validator: ValidateFunction | undefined
const validate = () => (validator ??= compiledSchema())

/** `/plugins/0/phases/access/1` → `$.plugins[0].phases.access[1]`. */
export function jsonPath(pointer: string): string {
  if (!pointer) return '$'
  return (
    '$' +
    pointer
      .split('/')
      .slice(1)
      .map((seg) => {
        const key = seg.replace(/~1/g, '/').replace(/~0/g, '~')
        return /^\d+$/.test(key) ? `[${key}]` : /^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`
      })
      .join('')
  )
}

function describe(err: ErrorObject): { path: string; reason: string } {
  let pointer = err.instancePath
  let reason = err.message ?? 'is invalid'
  const propertyName = (err as ErrorObject & { propertyName?: string }).propertyName
  if (propertyName !== undefined) {
    // a bad key (e.g. a misspelt phase under `phases`): point at the key itself
    return {
      path: jsonPath(`${pointer}/${propertyName}`),
      reason: `is not a valid name here (${describe({ ...err, propertyName: undefined } as ErrorObject).reason})`,
    }
  }
  if (err.keyword === 'additionalProperties') {
    pointer += `/${(err.params as { additionalProperty: string }).additionalProperty}`
    reason = 'is not a known field'
  } else if (err.keyword === 'required') {
    pointer += `/${(err.params as { missingProperty: string }).missingProperty}`
    reason = 'is required'
  } else if (err.keyword === 'enum') {
    reason = `must be one of ${(err.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}`
  } else if (err.keyword === 'propertyNames') {
    pointer += `/${(err.params as { propertyName: string }).propertyName}`
    reason = 'is not a phase'
  }
  return { path: jsonPath(pointer), reason }
}

/** Reads, parses and validates one fixture file. */
export function loadFixture(file: string): LoadedFixture {
  const abs = resolve(file)
  let text: string
  try {
    text = readFileSync(abs, 'utf8')
  } catch (e) {
    throw new FixtureError(
      file,
      '$',
      `cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`,
      'unreadable',
    )
  }
  let data: unknown
  try {
    data = JSON.parse(text)
  } catch (e) {
    throw new FixtureError(file, '$', `is not valid JSON (${jsonErrorMessage(text, e)})`)
  }
  const check = validate()
  if (!check(data)) {
    const errors = check.errors ?? []
    // a oneOf failure is reported through its branches; prefer the deepest, most specific error
    const best = [...errors].sort((a, b) => b.instancePath.length - a.instancePath.length || rank(a) - rank(b))[0]
    const { path, reason } = best ? describe(best) : { path: '$', reason: 'is invalid' }
    throw new FixtureError(file, path, reason)
  }
  return { file, dir: dirname(abs), fixture: data as Fixture }
}

const rank = (e: ErrorObject) => (e.keyword === 'oneOf' || e.keyword === 'if' ? 1 : 0)
