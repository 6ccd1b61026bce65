import { FlowError, type FlowContext, type FlowRecord } from '../../contract.js'
import { isHttpUrl } from '../urls.js'
import { type Endpoints, endpoints, flag, text } from './endpoints.js'

/**
 * The record's endpoints for a flow step: as `endpoints`, with every URL the issuer's metadata gave
 * checked again by the deployment's rules (`allowed`: providers.allow). /store checked them, but
 * the metadata is read again once its cache expires, and it may have changed since: the browser
 * must never be sent to, nor a request made to, a URL the deployment does not allow.
 */
export async function checkedEndpoints(
  record: Readonly<FlowRecord>,
  io: Pick<FlowContext, 'http' | 'allowed'>,
): Promise<Endpoints> {
  return usable(record, await endpoints(record, io.http), io.allowed)
}

/** `e` when every URL the metadata gave is allowed; else a PROVIDER_NOT_ALLOWED FlowError naming the first. */
export function usable(record: Readonly<FlowRecord>, e: Endpoints, allowed: (url: string) => boolean): Endpoints {
  for (const [field, problem] of Object.entries(metadataUrlProblems(record, e, allowed)))
    throw new FlowError({ brokerCode: 'PROVIDER_NOT_ALLOWED', description: `The ${field} ${problem}` })
  return e
}

/** Problems with a record's OpenID/metadata fields, as `{field: message}`, before any I/O. */
export function metadataFieldProblems(record: Readonly<FlowRecord>): Record<string, string> {
  const problems: Record<string, string> = {}
  for (const field of ['issuer', 'jwks_uri', 'par_url', 'resource', 'profile_url']) {
    if (record[field] !== undefined && !isHttpUrl(String(record[field])))
      problems[field] = 'must be an absolute http(s) URL'
  }
  const issuer = text(record.issuer)
  if (issuer && isHttpUrl(issuer) && (issuer.includes('?') || issuer.includes('#')))
    problems.issuer = 'must have no query or fragment'
  // RFC 8707 §2: a resource indicator is an absolute URI without a fragment.
  if (typeof record.resource === 'string' && isHttpUrl(record.resource) && record.resource.includes('#'))
    problems.resource = 'must have no fragment'
  if (record.profile !== undefined && !/^(true|false|1|0|yes|no|on|off)$/i.test(String(record.profile)))
    problems.profile = 'must be true or false'
  if (record.body_format !== undefined && !['json', 'form'].includes(String(record.body_format)))
    problems.body_format = 'must be json or form'
  return problems
}

/** What the discovered metadata leaves missing or contradicts, as `{field: message}`. */
export function endpointProblems(
  record: Readonly<FlowRecord>,
  e: Endpoints,
  need: { authorize: boolean },
  allowed: (url: string) => boolean,
): Record<string, string> {
  const problems: Record<string, string> = {}
  const from = e.issuer ? ' (neither in the record nor in the issuer metadata)' : ''
  if (need.authorize && !e.authorize) problems.authorize_url = `is required${from}`
  if (!e.token) problems.access_url = `is required${from}`
  if (flag(record.profile) && !e.userinfo)
    problems.profile = `needs a profile_url, or an issuer whose metadata has a userinfo_endpoint${e.issuer ? ` (${e.issuer} has none)` : ''}`
  if (need.authorize && e.usePar && !e.par) problems.par_url = `is required to push authorization requests${from}`
  for (const [field, problem] of Object.entries(metadataUrlProblems(record, e, allowed))) problems[field] ??= problem
  return problems
}

/** The URLs the issuer's metadata gave (not the record's own), each judged by the same rules as a record's URL. */
function metadataUrlProblems(
  record: Readonly<FlowRecord>,
  e: Endpoints,
  allowed: (url: string) => boolean,
): Record<string, string> {
  const problems: Record<string, string> = {}
  const judge = (field: string, url: string | undefined) => {
    if (url === undefined || url === text(record[field])) return
    if (!isHttpUrl(url))
      problems[field] = `must be an absolute http(s) URL; the issuer metadata gives "${String(url).slice(0, 200)}"`
    else if (!allowed(url))
      problems[field] = `is not in providers.allow: the issuer metadata gives ${new URL(url).origin}`
  }
  // Called on every flow's /store and /callback: field by field, without a list of pairs made each time.
  judge('authorize_url', e.authorize)
  judge('access_url', e.token)
  judge('jwks_uri', e.jwks)
  judge('par_url', e.par)
  // Discovered from a protected resource (RFC 9728), and the registration the flow will use (RFC 7591).
  judge('issuer', e.issuer)
  judge('registration_endpoint', record.client_id === undefined ? e.registration : undefined)
  judge('profile_url', flag(record.profile) ? e.userinfo : undefined)
  return problems
}
