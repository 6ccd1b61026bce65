import type { FlowPlugin, FlowRecord, StoreIo } from '../../../flows/contract.js'
import { FlowError, pluginName } from '../../../flows/contract.js'
import type { BrokerConfig } from '../../config/schema.js'
import { DELIVERY_MODES } from '../../config/runtime.js'
import { isHttpUrl, urlParts } from '../../../flows/lib/urls.js'
import { BrokerError, brokerError } from '../../errors/index.js'
import type { DestinationProblems } from '../outbound/record-check.js'
import { allowedDestination, providerFetch } from './context.js'
import { normalizeParams, PARAMS_FIELDS } from './params-field.js'

const FIELD_NAME = /^[A-Za-z][A-Za-z0-9_.-]{0,63}$/
const URL_FIELDS = ['request_url', 'access_url', 'authorize_url', 'verify_url'] as const
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

/** The composed plugin name of a sanitized record. */
export const recordPluginName = (record: FlowRecord): string => pluginName(record)

/** The record as its plugin reads it (the plugin's `normalize`: OAuth 1.0a's signature method, key and token aliases). */
export const normalizeRecord = (record: FlowRecord, plugin: FlowPlugin): FlowRecord =>
  plugin.normalize ? plugin.normalize({ ...record }) : record

/**
 * Everything the plugin and the deployment require of a (normalized) record; throws one VALIDATION with every
 * problem, its destinations' (checked before, outbound/record-check.ts) among them. A record whose only
 * fault is a callback or delivery mode this deployment refuses gets CALLBACK_NOT_ALLOWED /
 * DELIVERY_NOT_ALLOWED, one whose only faults are refused destinations PROVIDER_NOT_ALLOWED: each says
 * how to allow it. The plugin's own checks, which may fetch an issuer's metadata, run only for a record
 * whose destinations are clean.
 */
export async function validateRecord(
  record: FlowRecord,
  plugin: FlowPlugin,
  config: Readonly<BrokerConfig>,
  destinations: DestinationProblems,
  /** The broker's callback URL and client registrations, for a plugin that registers at /store. */
  own: Pick<StoreIo, 'callbackUrl' | 'registrations'> = {},
): Promise<void> {
  const problems: Record<string, string> = {}
  let refused: BrokerError | undefined
  for (const field of plugin.required ?? []) {
    if (record[field] === undefined || record[field] === '') problems[field] = 'is required'
  }
  for (const field of URL_FIELDS) {
    if (record[field] !== undefined && !isHttpUrl(String(record[field])))
      problems[field] = 'must be an absolute http(s) URL'
  }
  if (record.callback !== undefined) {
    const cb = String(record.callback)
    if (cb !== 'oob') {
      if (!isHttpUrl(cb)) problems.callback = 'must be an absolute http(s) URL, or "oob"'
      else if (!callbackAllowed(cb, config)) {
        refused = brokerError(config.callbacks.allow ? 'callbackNotAllowed' : 'callbackNotLoopback', { callback: cb })
        problems.callback = config.callbacks.allow
          ? 'is not in callbacks.allow'
          : 'is not a loopback address and callbacks.allow is not set'
      }
    }
  }
  if (record.delivery !== undefined) {
    const mode = String(record.delivery)
    if (!(DELIVERY_MODES as readonly string[]).includes(mode))
      problems.delivery = `must be one of ${DELIVERY_MODES.join(', ')}`
    else if (!config.delivery.allow.includes(mode as (typeof DELIVERY_MODES)[number])) {
      refused ??= brokerError('deliveryNotAllowed', { mode, allowed: config.delivery.allow })
      problems.delivery = `is not allowed here; allowed: ${config.delivery.allow.join(', ')}`
    }
  }
  Object.assign(problems, destinations.problems)
  // A plugin registers a client at /store (RFC 7591) only for a record nothing else is wrong with: one
  // refused for its callback kept a client at the authorization server all the same, for registration.ttl.
  const clean = !refused && Object.keys(problems).length === 0
  // Its validation fetches an issuer's (or a resource's) metadata: never from a record whose destinations were refused.
  const fetches = record.issuer !== undefined || record.resource !== undefined
  if (plugin.validate && !(destinations.problems && fetches))
    Object.assign(
      problems,
      await pluginProblems(plugin, record, config, clean ? own : { callbackUrl: own.callbackUrl }),
    )
  // Only refused destinations (often authorize_url and access_url together): PROVIDER_NOT_ALLOWED, naming the first.
  if (destinations.refused && Object.keys(problems).length === destinations.refusals) throw destinations.refused
  // Only the deployment's refusal: its own code and advice. Anything else wrong too: every field at once.
  if (refused && Object.keys(problems).length === 1) throw refused
  if (Object.keys(problems).length) throw brokerError('invalidRecord', { fields: problems })
}

/**
 * A plugin's own checks, with HTTP to the provider (discovery at /store goes through the same
 * guarded fetch as every flow step). A provider that fails there is the provider's error (502/504).
 */
async function pluginProblems(
  plugin: FlowPlugin,
  record: FlowRecord,
  config: Readonly<BrokerConfig>,
  own: Pick<StoreIo, 'callbackUrl' | 'registrations'>,
): Promise<Record<string, string>> {
  // Built field by field and called as a method: spreading two objects into it and binding
  // `validate` made validateRecord 15.4k instructions of every /store, 5.6k without (bench/instructions.ts).
  const io: StoreIo = {
    http: storeHttp(config),
    allowed: allowedDestination,
    callbackUrl: own.callbackUrl,
    registrations: own.registrations,
  }
  try {
    return await plugin.validate!(record, io)
  } catch (err) {
    throw atStoreError(err)
  }
}

/** What a plugin may use at /store: the guarded fetch of every flow step, and the deployment's URL rules. */
export function storeIo(config: Readonly<BrokerConfig>): StoreIo {
  return {
    http: storeHttp(config),
    // providers.allow, and address literals the policy refuses: the same rules as the record's own URLs.
    allowed: allowedDestination,
  }
}

const storeHttp =
  (config: Readonly<BrokerConfig>): StoreIo['http'] =>
  (url, request) =>
    providerFetch(url, request, config.provider.timeout)

/** A provider's failure at /store is the provider's error (502/504), not the record's; anything else as it is. */
export function atStoreError(err: unknown): unknown {
  if (!(err instanceof FlowError)) return err
  const id =
    err.brokerCode === 'PROVIDER_NOT_ALLOWED'
      ? 'providerRefusedAtStore'
      : err.brokerCode === 'PROVIDER_TIMEOUT'
        ? 'providerTimeoutAtStore'
        : 'providerFailedAtStore'
  return brokerError(id, { message: err.description })
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]'])

/** Exact origins or URL prefixes from callbacks.allow; loopback only when it is not set. */
export function callbackAllowed(callback: string, config: Readonly<BrokerConfig>): boolean {
  const url = urlParts(callback)
  if (!url) return false
  const allow = config.callbacks.allow
  if (!allow) return LOOPBACK.has(url.hostname) || url.hostname.endsWith('.localhost')
  return allow.some((entry) => {
    const allowed = urlParts(entry)
    if (!allowed) return false
    if (allowed.origin !== url.origin) return false
    // An origin allows every path; a prefix must match on a path boundary (/app does not allow /appx).
    const prefix = allowed.pathname
    if (prefix === '/') return true
    return url.pathname === prefix || url.pathname.startsWith(prefix.endsWith('/') ? prefix : `${prefix}/`)
  })
}
