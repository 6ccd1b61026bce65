import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import type { FlowRecord } from '../../../flows/contract.js'
import { closest } from '../../../util/closest.js'
import { jsonErrorMessage } from '../../../util/source-position.js'
import { catalogue } from '../../broker/providers/catalogue.js'
import { findProvider } from '../../broker/providers/expand.js'
import { brokerError } from '../../errors/index.js'
import { parseFieldPairs } from './fields.js'
import { FLOW_PRESETS, FLOW_PRESET_NAMES } from './presets.js'

export interface RecordInput {
  /** A flow preset name (oauth2-3, oauth1-3, …), or a provider of the catalogue (github, okta, …). */
  flow?: string
  /** A JSON file holding a whole record. */
  file?: string
  /** Record fields from their own flags; undefined ones are not set. */
  fields?: Readonly<Record<string, string | undefined>>
  /** `name=value` pairs from --field. */
  pairs?: readonly string[]
  cwd?: string
}

/**
 * The record to store: the --file record, then the preset's auth_* fields (or `provider` when --flow
 * names one), then --field pairs, then flags.
 */
export function buildRecord(input: RecordInput): FlowRecord {
  const fromFile = input.file ? readRecordFile(resolve(input.cwd ?? process.cwd(), input.file)) : {}
  const preset = input.flow && Object.hasOwn(FLOW_PRESETS, input.flow) ? FLOW_PRESETS[input.flow] : undefined
  const provider = input.flow && !preset ? findProvider(input.flow) : undefined
  if (input.flow && !preset && !provider) {
    const suggestion = closest(input.flow, [...FLOW_PRESET_NAMES, ...catalogue().keys()])
    throw brokerError('unknownFlowPreset', { flow: input.flow, known: FLOW_PRESET_NAMES, suggestion })
  }
  const { fields: pairs, bad } = parseFieldPairs(input.pairs ?? [])
  if (bad.length) throw brokerError('fieldPairInvalid', { pair: bad[0]! })
  const flags = Object.fromEntries(Object.entries(input.fields ?? {}).filter(([, v]) => v !== undefined)) as Record<
    string,
    string
  >
  const fromFlow = provider ? { provider: provider.name } : preset?.fields
  const record = { ...fromFile, ...fromFlow, ...pairs, ...flags } as FlowRecord
  // A resource alone names OAuth 2 (the broker discovers the rest, RFC 9728).
  const named = preset !== undefined || record.provider !== undefined || record.resource !== undefined
  if (!named && record.auth_version === undefined && record.auth_flow === undefined) {
    throw brokerError('flowNotNamed', { known: FLOW_PRESET_NAMES })
  }
  return record
}

/** The preset a record matches by its auth_* fields, so a --file record gets the same checks. */
export function presetOf(record: Readonly<FlowRecord>, name?: string) {
  if (name && FLOW_PRESETS[name]) return FLOW_PRESETS[name]
  return Object.values(FLOW_PRESETS).find((p) =>
    ['auth_flow', 'auth_version', 'auth_leg', 'grant_type'].every(
      (k) => (p.fields[k] ?? undefined) === (record[k] === undefined ? undefined : String(record[k])),
    ),
  )
}

function readRecordFile(path: string): Record<string, unknown> {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (err) {
    throw brokerError('recordFileUnreadable', {
      file: path,
      reason: (err as NodeJS.ErrnoException).code ?? (err as Error).message,
    })
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch (err) {
    throw brokerError('recordFileNotJson', { file: path, reason: jsonErrorMessage(text, err) })
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
    throw brokerError('recordFileNotObject', { file: path })
  return parsed as Record<string, unknown>
}
