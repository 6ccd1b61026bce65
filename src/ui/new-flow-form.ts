import type { FlowRecord } from '../../flows/contract.js'
import { CLIENT_AUTH_METHODS } from '../../flows/lib/client-auth.js'
import { fieldInfo } from '../services/store/fields.js'
import { FLOW_PRESETS, FLOW_PRESET_NAMES, missingFields } from '../services/store/presets.js'
import { checkUrl } from '../services/store/prompt.js'

/** One field of the New flow form. */
export interface FormField {
  readonly field: string
  readonly kind: 'text' | 'url' | 'secret' | 'choice'
  readonly required: boolean
  /** A choice field's values; '' (the broker's default) comes first. */
  readonly options?: readonly string[]
}

export const PRESETS = FLOW_PRESET_NAMES

/** Fields an issuer's metadata fills in: optional once an issuer is given (as `broker store` treats them). */
const DISCOVERED = new Set(['authorize_url', 'access_url', 'device_authorization_url'])

const field = (name: string, required: boolean): FormField => ({ field: name, kind: fieldInfo(name).kind, required })

/**
 * The fields a preset's form asks for, given what is filled in so far: what `broker store` would
 * require, then callback and scope. An OAuth 2 flow that does not require a client_secret still
 * takes one (a confidential client such as GitHub's or Google's), optional, right after client_id;
 * it also takes an issuer (discovery and id_token verification) and a client_auth method, and a
 * private_key once that method is private_key_jwt. An OAuth 1.0a flow takes the consumer_secret
 * (HMAC-SHA1 signing, the broker's default), and the oauth_token_secret beside an oauth_token.
 */
export function formFields(preset: string, values: Readonly<Record<string, string>> = {}): FormField[] {
  const p = FLOW_PRESETS[preset]!
  const oauth1 = p.fields.auth_version === '1'
  // With a consumer_key present, missingFields adds what the signature method needs (consumer_secret).
  const base = { ...p.fields, ...(oauth1 ? { consumer_key: '' } : {}) } as FlowRecord
  const required = missingFields(base, p)
  const issuer = (values.issuer ?? '').trim() !== ''
  const fields = required.map((name) => field(name, !(issuer && DISCOVERED.has(name))))
  const after = (anchor: string, ...added: FormField[]) => {
    const at = fields.findIndex((f) => f.field === anchor)
    fields.splice(at + 1, 0, ...added.filter((a) => !fields.some((f) => f.field === a.field)))
  }
  const optional = p.browser ? ['callback', 'scope'] : ['callback']
  fields.push(...optional.filter((f) => !required.includes(f)).map((name) => field(name, false)))
  if (oauth1) {
    // The 1-legged flow signs with a stored token when it has one; Echo requires it.
    if (p.fields.auth_leg === '1') after('consumer_secret', field('oauth_token', false))
    if (fields.some((f) => f.field === 'oauth_token')) after('oauth_token', field('oauth_token_secret', false))
    return fields
  }
  const auth = values.client_auth ?? ''
  const secretNeeded = auth === 'client_secret_basic' || auth === 'client_secret_jwt'
  if (!required.includes('client_secret')) after('client_id', field('client_secret', secretNeeded))
  after('client_secret', field('issuer', false))
  fields.push({ field: 'client_auth', kind: 'choice', required: false, options: ['', ...CLIENT_AUTH_METHODS] })
  if (auth === 'private_key_jwt') fields.push(field('private_key', true))
  return fields
}

/** What is wrong with a value, as `broker store`'s prompts say it; undefined when fine. */
export function fieldError(field: FormField, value: string): string | undefined {
  const v = value.trim()
  if (!v) return field.required ? 'required' : undefined
  if (field.kind === 'url') {
    const ok = checkUrl(v, field.field)
    return ok === true ? undefined : ok
  }
  return undefined
}

/** A choice field's value after ← (-1) or → (+1), wrapping around. */
export function nextChoice(field: FormField, value: string, step: 1 | -1): string {
  const options = field.options ?? ['']
  const at = Math.max(0, options.indexOf(value))
  return options[(at + step + options.length) % options.length]!
}

/**
 * The record to POST /store: the preset's auth_* fields and the filled-in values of the fields the
 * form shows now (a value typed under another preset, or for a field since hidden, is not sent).
 */
export function formRecord(preset: string, values: Readonly<Record<string, string>>): Record<string, string> {
  const shown = new Set(formFields(preset, values).map((f) => f.field))
  const filled = Object.fromEntries(
    Object.entries(values)
      .filter(([k]) => shown.has(k))
      .map(([k, v]) => [k, v.trim()])
      .filter(([, v]) => v),
  )
  return { ...FLOW_PRESETS[preset]!.fields, ...filled }
}
