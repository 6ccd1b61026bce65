import type { FlowPlugin, FlowRecord, StoreIo } from '../../../../flows/contract.js'
import { isHttpUrl, urlParts } from '../../../../flows/lib/urls.js'
import type { BrokerConfig } from '../../../config/schema.js'
import { DELIVERY_MODES } from '../../../config/runtime.js'
import { BrokerError, brokerError } from '../../../errors/index.js'
import { allowedDestination } from '../../flow/context.js'
import type { DestinationProblems } from '../../outbound/record-check.js'
import { atStoreError, storeHttp } from './at-store.js'

const URL_FIELDS = ['request_url', 'access_url', 'authorize_url', 'verify_url'] as const

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
