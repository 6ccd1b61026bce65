import type { FlowRecord } from '../../flows/contract.js'
import { fieldInfo } from '../services/store/fields.js'
import { FLOW_PRESETS, FLOW_PRESET_NAMES, missingFields } from '../services/store/presets.js'
import { checkUrl } from '../services/store/prompt.js'

/** One field of the New flow form. */
export interface FormField {
  readonly field: string
  readonly kind: 'text' | 'url' | 'secret'
  readonly required: boolean
}

export const PRESETS = FLOW_PRESET_NAMES

/**
 * The fields a preset's form asks for: what `broker store` would require, then callback and scope.
 * An OAuth 2 flow that does not require a client_secret still takes one (a confidential client such
 * as GitHub's or Google's): it is asked for, optional, right after client_id.
 */
export function formFields(preset: string): FormField[] {
  const p = FLOW_PRESETS[preset]!
  const required = missingFields({ ...p.fields } as FlowRecord, p)
  const optional = p.browser ? ['callback', 'scope'] : ['callback']
  const fields: FormField[] = [
    ...required.map((field) => ({ field, kind: fieldInfo(field).kind, required: true })),
    ...optional
      .filter((f) => !required.includes(f))
      .map((field) => ({ field, kind: fieldInfo(field).kind, required: false })),
  ]
  if (required.includes('client_id') && !required.includes('client_secret'))
    fields.splice(required.indexOf('client_id') + 1, 0, { field: 'client_secret', kind: 'secret', required: false })
  return fields
}

/** What is wrong with a value, as `broker store`'s prompts say it; undefined when fine. */
export function fieldError(field: FormField, value: string): string | undefined {
  const v = value.trim()
  if (!v) return field.required ? 'required' : undefined
  if (field.kind === 'url') {
    const ok = checkUrl(v, field.field === 'callback')
    return ok === true ? undefined : ok
  }
  return undefined
}

/** The record to POST /store: the preset's auth_* fields and the filled-in values. */
export function formRecord(preset: string, values: Readonly<Record<string, string>>): Record<string, string> {
  const filled = Object.fromEntries(
    Object.entries(values)
      .map(([k, v]) => [k, v.trim()])
      .filter(([, v]) => v),
  )
  return { ...FLOW_PRESETS[preset]!.fields, ...filled }
}
