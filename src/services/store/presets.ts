import type { FlowRecord } from '../../../flows/contract.js'

/** A flow as people say it (`oauth2-3`), mapped to the record's auth_* fields and what it needs. */
export interface FlowPreset {
  readonly summary: string
  /** auth_* fields (and any fixed field such as grant_type) the preset writes into the record. */
  readonly fields: Readonly<Record<string, string>>
  /** Fields the flow cannot run without; all missing ones are reported (or asked for) at once. */
  readonly required: readonly string[]
  /** True when the user's browser has to visit the start URL (a consent screen). */
  readonly browser: boolean
}

export const FLOW_PRESETS: Readonly<Record<string, FlowPreset>> = {
  'oauth2-3': {
    summary: 'OAuth 2 authorization code with PKCE (the user signs in)',
    fields: { auth_version: '2', auth_leg: '3' },
    required: ['client_id', 'authorize_url', 'access_url'],
    browser: true,
  },
  'oauth2-2': {
    summary: 'OAuth 2 client credentials (no user)',
    fields: { auth_version: '2', auth_leg: '2' },
    required: ['client_id', 'client_secret', 'access_url'],
    browser: false,
  },
  'oauth2-refresh': {
    summary: 'OAuth 2 refresh_token grant',
    fields: { auth_version: '2', auth_leg: '2', grant_type: 'refresh_token' },
    required: ['client_id', 'access_url', 'refresh_token'],
    browser: false,
  },
  'oauth2-password': {
    summary: 'OAuth 2 resource owner password (legacy only)',
    fields: { auth_flow: 'owner_resources', auth_version: '2' },
    required: ['client_id', 'access_url', 'username', 'password'],
    browser: false,
  },
  device: {
    summary: 'OAuth 2 device authorization (RFC 8628): the user enters a code on any device',
    fields: { auth_flow: 'device', auth_version: '2' },
    required: ['client_id', 'device_authorization_url', 'access_url'],
    browser: true,
  },
  'oauth1-3': {
    summary: 'OAuth 1.0a 3-legged (the user authorizes)',
    fields: { auth_version: '1', auth_leg: '3' },
    required: ['consumer_key', 'request_url', 'authorize_url', 'access_url'],
    browser: true,
  },
  'oauth1-2': {
    summary: 'OAuth 1.0a 2-legged (request token traded at once)',
    fields: { auth_version: '1', auth_leg: '2' },
    required: ['consumer_key', 'request_url', 'access_url'],
    browser: false,
  },
  'oauth1-1': {
    summary: 'OAuth 1.0a 1-legged: signs resource requests',
    fields: { auth_version: '1', auth_leg: '1' },
    required: ['consumer_key'],
    browser: false,
  },
  'oauth1-echo': {
    summary: 'OAuth Echo: delegated credential verification',
    fields: { auth_flow: 'echo', auth_version: '1' },
    required: ['consumer_key', 'oauth_token', 'verify_url'],
    browser: false,
  },
}

export const FLOW_PRESET_NAMES = Object.keys(FLOW_PRESETS)

// The client_auth values (aliases too) with which an OAuth 2 client proves itself with its client_secret.
const SECRET_AUTH = new Set(['client_secret_post', 'post', 'client_secret_basic', 'basic', 'client_secret_jwt'])

/**
 * The fields a record still lacks for its flow. OAuth 1.0a needs a secret or, for RSA-SHA1, a key; an
 * OAuth 2 client needs its client_secret when client_auth names a secret method (a confidential
 * client), or for client credentials unless it signs with a key or says it has none. A public client
 * (PKCE only, a device, client_auth none) is never asked for one. The endpoints an issuer or a resource
 * discovers are never asked for, nor the client the broker registers at a resource's server.
 */
export function missingFields(
  record: Readonly<FlowRecord>,
  preset: FlowPreset | undefined,
  /** The record's provider is known to give its clients a secret it requires (the catalogue's `confidential`). */
  { confidential = false }: { confidential?: boolean } = {},
): string[] {
  const auth = record.client_auth === undefined ? undefined : String(record.client_auth)
  const keyOrNone = auth === 'none' || auth === 'private_key_jwt'
  const required = (preset?.required ?? []).filter((f) => !(keyOrNone && f === 'client_secret'))
  if (
    String(record.auth_version) === '2' &&
    ((auth !== undefined && SECRET_AUTH.has(auth)) || (confidential && !keyOrNone))
  )
    required.push('client_secret')
  if (record.auth_version === '1' && record.consumer_key !== undefined) {
    required.push(
      String(record.signature_method ?? '')
        .toUpperCase()
        .replace(/_/g, '-') === 'RSA-SHA1'
        ? 'private_key'
        : 'consumer_secret',
    )
  }
  // A resource (RFC 9728) names its authorization server, and the broker registers a client there (RFC 7591)
  // when the record names none; the device and password flows discover nothing from it.
  const fromResource = record.resource !== undefined && record.auth_version === '2' && record.auth_flow === undefined
  // An issuer's metadata names the endpoints: the broker discovers them at /store.
  const discovered =
    record.issuer || fromResource ? new Set(['authorize_url', 'access_url', 'device_authorization_url']) : undefined
  const registered = fromResource && !record.client_id ? new Set(['client_id', 'client_secret']) : undefined
  return [...new Set(required)].filter(
    (field) =>
      (record[field] === undefined || record[field] === '') && !discovered?.has(field) && !registered?.has(field),
  )
}
