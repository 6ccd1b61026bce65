import type { FlowRecord } from '../../../flows/contract.js'
import { extraParams } from '../../../flows/lib/urls.js'
import { flag } from '../../../flows/lib/oidc/index.js'
import { brokerError } from '../../errors/index.js'
import { type CatalogueEntry, catalogue, SUBDOMAIN } from './catalogue.js'

// `[subdomain].okta.com` takes DNS labels; `https://[subdomain]/realms/x` (Keycloak, Mastodon …) a host, port and path.
const LABELS = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,62})(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}))*$/
const HOST_PATH = /^[A-Za-z0-9](?:[A-Za-z0-9.-]{0,252})(?::\d{1,5})?(?:\/[A-Za-z0-9._~%!$&'()*+,;=:@-]+)*\/?$/

const MAX_SCOPE = 16_384

/** The catalogue entry named `name` (any case), or undefined. */
export function findProvider(name: string): CatalogueEntry | undefined {
  return catalogue().get(name.toLowerCase())
}

/** The fields a record naming `entry` must still give for its URLs (`subdomain`). */
export function providerNeeds(record: Readonly<FlowRecord>, entry: CatalogueEntry): string[] {
  if (!entry.subdomain || record.subdomain !== undefined) return []
  return subdomainFields(entry).some((f) => record[f] === undefined) ? ['subdomain'] : []
}

/** The fields of `entry` that need the record's `subdomain`. */
export const subdomainFields = (entry: CatalogueEntry): string[] =>
  Object.keys(entry.record).filter((f) => String(entry.record[f]).includes(SUBDOMAIN))

/**
 * A record with what its `provider` knows filled in: auth_version (and auth_leg 3) when the record
 * names no flow, the provider's URLs with `[subdomain]` filled from the record's `subdomain`, and the
 * broker's preset fields (client_auth, authorize_params, pkce …), and the preset's `profile_url` when the record
 * asks for `profile`. The record's own fields win;
 * authorize_params merge, the record's on top. A `scope` given as a list is joined with the
 * provider's separator (a space without a provider). Runs before any check of the record's URLs.
 * A record without `provider` or a scope list is returned as it is, and loads nothing. With
 * `subdomainLater` (the CLI, before it asks for it), fields that need a missing subdomain stay unset.
 */
export function expandProvider(record: FlowRecord, opts: { subdomainLater?: boolean } = {}): FlowRecord {
  const scopeList = typeof record.scope === 'object'
  if (record.provider === undefined && !scopeList) return record
  const problems: Record<string, string> = {}
  const entry = record.provider === undefined ? undefined : findProvider(String(record.provider))
  if (record.provider !== undefined && !entry)
    problems.provider = `is not a known provider ("${String(record.provider).slice(0, 64)}"); broker store --list-providers lists them`
  // One spread, the record last so that its own fields win (adding the fields one by one measured ~10× slower).
  const out: FlowRecord = entry
    ? {
        ...entry.fixed,
        ...(entry.subdomain ? withSubdomain(record, entry, problems, opts.subdomainLater === true) : undefined),
        ...flowOf(record, entry, problems),
        ...record,
        provider: entry.name,
      }
    : { ...record }
  // Only when the flow will call it: an unused URL is never judged by providers.allow.
  if (entry?.profile_url !== undefined && record.profile_url === undefined && flag(record.profile))
    out.profile_url = entry.profile_url
  if (entry && entry.fixed.authorize_params !== undefined && record.authorize_params !== undefined)
    out.authorize_params = { ...extraParams(entry.fixed.authorize_params), ...extraParams(record.authorize_params) }
  if (scopeList) {
    const list = record.scope
    const joined =
      Array.isArray(list) && list.every((s) => typeof s === 'string' && s && !s.includes('\0'))
        ? list.join(entry?.scope_separator ?? ' ')
        : undefined
    if (joined === undefined) problems.scope = 'must be text, or a list of scope names'
    else if (joined.length > MAX_SCOPE) problems.scope = `is longer than ${MAX_SCOPE} characters`
    else out.scope = joined
  }
  if (Object.keys(problems).length) throw brokerError('invalidRecord', { fields: problems })
  return out
}

/** auth_version (and auth_leg 3) when the record names no flow; a problem when it names another OAuth. */
function flowOf(
  record: Readonly<FlowRecord>,
  entry: CatalogueEntry,
  problems: Record<string, string>,
): Record<string, string> | undefined {
  const version = String(entry.oauth)
  if (record.auth_version === undefined && record.auth_flow === undefined)
    return { auth_version: version, auth_leg: '3' }
  if (record.auth_version !== undefined && String(record.auth_version) !== version)
    problems.auth_version = `is ${String(record.auth_version)}, but provider "${entry.name}" speaks OAuth ${version}`
  return undefined
}

/** The provider's fields that need `[subdomain]`, filled from the record's (checked) `subdomain`. */
function withSubdomain(
  record: Readonly<FlowRecord>,
  entry: CatalogueEntry,
  problems: Record<string, string>,
  later: boolean,
): Record<string, string> {
  const out: Record<string, string> = {}
  const subdomain = record.subdomain === undefined ? undefined : String(record.subdomain)
  for (const field of subdomainFields(entry)) {
    if (record[field] !== undefined) continue
    const value = String(entry.record[field])
    if (subdomain === undefined) {
      if (!later) problems.subdomain = `is required by provider "${entry.name}" (${value})`
      continue
    }
    const after = value.charAt(value.indexOf(SUBDOMAIN) + SUBDOMAIN.length)
    if (!(after === '.' ? LABELS : HOST_PATH).test(subdomain)) {
      problems.subdomain =
        after === '.'
          ? `must be DNS labels for provider "${entry.name}" (${value})`
          : `must be a host, with an optional port and path, for provider "${entry.name}" (${value})`
      continue
    }
    out[field] = value.replaceAll(SUBDOMAIN, subdomain)
  }
  return out
}
