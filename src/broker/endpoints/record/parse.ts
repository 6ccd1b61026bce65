import type { FlowRecord } from '../../../../flows/contract.js'
import { brokerError } from '../../../errors/index.js'
import { normalizeParams, PARAMS_FIELDS } from './params-field.js'

const FIELD_NAME = /^[A-Za-z][A-Za-z0-9_.-]{0,63}$/
const MAX_FIELDS = 100
const MAX_VALUE = 16_384

/** Where a record's value may be an object rather than text. */
const OBJECT_FIELDS = new Set(['authorize_params', 'token_params', 'private_key', 'scope', 'dpop_key'])

// Field rules as constants: a regex literal in a function body is a new object on every call.
const AUTH_TYPE = /^[a-z]+$/
const AUTH_FIELDS: ReadonlyArray<readonly [field: string, pattern: RegExp, message: string]> = [
  ['auth_flow', /^[a-z_]+$/, 'must be letters a-z and _ only'],
  ['auth_version', /^\d{1,4}$/, 'must be digits only'],
  ['auth_leg', /^\d{1,4}$/, 'must be digits only'],
]

/**
 * Checks the shape of a POST /store body and returns the record with its auth_* fields
 * sanitized. Guardian silently stripped bad characters from auth_*; the broker refuses them.
 */
export function sanitizeRecord(input: unknown): FlowRecord {
  if (!input || typeof input !== 'object' || Array.isArray(input)) {
    throw brokerError('recordNotObject')
  }
  const source = input as Record<string, unknown>
  const keys = Object.keys(source)
  if (keys.length > MAX_FIELDS) throw brokerError('tooManyFields', { max: MAX_FIELDS })
  // Every /store runs this: one pass, and the problems object only when there is a problem.
  let problems: Record<string, string> | undefined
  const record: Record<string, unknown> = {}
  for (const key of keys) {
    if (!FIELD_NAME.test(key)) {
      ;(problems ??= {})[key.slice(0, 64)] = 'is not a valid field name (letters, digits, _ . -; at most 64 characters)'
      continue
    }
    const value = source[key]
    if (value === null || value === undefined || value === '') continue
    let problem: string | undefined
    if (typeof value === 'string') {
      if (value.length > MAX_VALUE) problem = `is longer than ${MAX_VALUE} characters`
      else if (value.includes('\0')) problem = 'contains a null byte'
    } else if (typeof value === 'object' && !OBJECT_FIELDS.has(key)) problem = 'must be text, a number or a boolean'
    if (problem) (problems ??= {})[key] = problem
    else record[key] = value
  }
  for (const key of PARAMS_FIELDS) {
    if (record[key] === undefined || problems?.[key]) continue
    const params = normalizeParams(record[key])
    if ('problem' in params) (problems ??= {})[key] = params.problem
    else record[key] = params.value
  }

  const authType = record.auth_type === undefined ? 'oauth' : String(record.auth_type).toLowerCase()
  record.auth_type = authType
  if (!AUTH_TYPE.test(authType)) (problems ??= {}).auth_type = 'must be letters a-z only'
  // A protected resource alone (an MCP server, RFC 9728) names OAuth 2: the code flow, or the token
  // endpoint's grant (a refresh) when the record has a grant_type.
  if (
    authType === 'oauth' &&
    record.resource !== undefined &&
    record.auth_flow === undefined &&
    (record.auth_version ?? '2') === '2'
  ) {
    record.auth_version ??= '2'
    record.auth_leg ??= record.grant_type === undefined ? '3' : '2'
  }
  for (const [field, pattern, message] of AUTH_FIELDS) {
    if (record[field] === undefined) continue
    const value = String(record[field])
    record[field] = value
    if (!pattern.test(value)) (problems ??= {})[field] = message
  }

  if (problems) throw brokerError('invalidRecord', { fields: problems })
  return record as FlowRecord
}
