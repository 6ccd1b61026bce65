import type { FlowRecord } from '../../../flows/contract.js'
import { urlParts } from '../../../flows/lib/urls.js'
import { type BrokerError, brokerError } from '../../errors/index.js'
import { urlHasCredentials } from '../../redact.js'
import { isIpLiteral } from './addresses.js'
import { PROVIDER_URL_FIELDS, type ProviderPolicy, providerPolicy } from './policy.js'

/**
 * Fields whose value is sent in an HTTP header (the OAuth Authorization header's realm, OAuth
 * Echo's X-Auth-Service-Provider), with what the header allows: visible ASCII, and for a quoted
 * string no `"` or `\` (a quote would end the realm and add parameters of its own).
 */
export const HEADER_FIELDS: ReadonlyArray<readonly [field: string, allowed: RegExp, message: string]> = [
  ['realm', /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/, 'must be printable ASCII without " or \\ (it is sent in a header)'],
  ['verify_url', /^[\x21-\x7e]*$/, 'must be printable ASCII without spaces (it is sent in a header)'],
]

// Whitespace and control characters: the URL parser drops some of them, so the URL used differs from the one checked.
const USERINFO = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*@/i
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const UNSAFE_URL = /[\u0000-\u0020\u007f-\u009f\u2028\u2029]/

/**
 * The /store checks of where a record sends the broker and its users: every provider URL field
 * must be a clean http(s) URL without credentials, allowed by the provider policy; the callback
 * carries no credentials; header-bound fields hold only what a header may. Throws
 * PROVIDER_NOT_ALLOWED naming the (first) field when refused destinations are the only problems,
 * else VALIDATION with all.
 */
export function checkRecordDestinations(record: Readonly<FlowRecord>, policy = providerPolicy()): void {
  let problems: Record<string, string> | undefined
  let refused: BrokerError | undefined
  let refusals = 0
  for (const field of PROVIDER_URL_FIELDS) {
    const value = record[field]
    if (value === undefined) continue
    const url = String(value)
    const verdict = verdictOf(url, policy)
    if (verdict === OK) continue
    if (verdict !== 'listed' && verdict !== 'address') {
      ;(problems ??= {})[field] = verdict
      continue
    }
    const origin = urlParts(url)?.origin ?? url.slice(0, 64)
    refusals++
    refused ??= brokerError(verdict === 'listed' ? 'providerNotAllowed' : 'providerAddressNotAllowed', {
      field,
      origin,
    })
    ;(problems ??= {})[field] =
      verdict === 'listed' ? 'is not in providers.allow' : 'names an internal address this broker does not call'
  }
  // An app's own callback parameters are its business; a password in it is not.
  if (typeof record.callback === 'string' && USERINFO.test(record.callback))
    (problems ??= {}).callback = 'must not carry credentials (user:password@)'
  for (const [field, allowed, message] of HEADER_FIELDS) {
    const value = record[field]
    if (value !== undefined && !allowed.test(String(value))) (problems ??= {})[field] = message
  }
  if (!problems) return
  // Only refused destinations (often authorize_url and access_url together): PROVIDER_NOT_ALLOWED, naming the first.
  if (refused && Object.keys(problems).length === refusals) throw refused
  throw brokerError('invalidRecord', { fields: problems })
}

const OK = ''
type Verdict = typeof OK | 'listed' | 'address' | (string & {})

// Per policy, what each provider URL text came to: apps send the same few URLs with every /store,
// and the checks of one URL cost about a microsecond (regexes, the allow-list) where a lookup costs
// a few nanoseconds. Bounded like urls.ts's parts: the map starts over when full.
const MAX_KEPT = 512
const verdicts = new WeakMap<ProviderPolicy, Map<string, Verdict>>()

function verdictOf(url: string, policy: ProviderPolicy): Verdict {
  let kept = verdicts.get(policy)
  const hit = kept?.get(url)
  if (hit !== undefined) return hit
  const verdict = urlProblem(url) ?? destinationRefused(url, policy) ?? OK
  if (url.length <= 2048) {
    if (!kept || kept.size >= MAX_KEPT) verdicts.set(policy, (kept = new Map()))
    kept.set(url, verdict)
  }
  return verdict
}

function urlProblem(url: string): string | undefined {
  if (UNSAFE_URL.test(url)) return 'must not contain spaces or control characters'
  const u = urlParts(url)
  if (!u || (u.protocol !== 'http:' && u.protocol !== 'https:') || !u.hostname) return 'must be an absolute http(s) URL'
  if (urlHasCredentials(url)) return 'must not carry credentials (user:password@ or a secret parameter)'
  return undefined
}

/**
 * Why a URL is no destination, as far as /store can tell without DNS: not under providers.allow
 * ('listed'), or an address literal (or localhost) the policy does not permit ('address'). Names
 * are judged again on their resolved addresses when the request is made.
 */
export function destinationRefused(url: string, policy = providerPolicy()): 'listed' | 'address' | undefined {
  if (!policy.allows(url)) return 'listed'
  const host = urlParts(url)?.hostname ?? ''
  if (isIpLiteral(host)) return policy.permits(host, host) ? undefined : 'address'
  if (host === 'localhost' || host.endsWith('.localhost'))
    return policy.permits(host, '127.0.0.1') ? undefined : 'address'
  return undefined
}

/** For URLs met after /store (a provider's metadata): throws PROVIDER_NOT_ALLOWED naming `field` unless allowed. */
export function assertProviderUrl(field: string, url: string, policy: ProviderPolicy = providerPolicy()): void {
  const problem = urlProblem(url)
  if (problem) throw brokerError('invalidRecord', { fields: { [field]: problem } })
  const why = destinationRefused(url, policy)
  if (why) {
    const origin = urlParts(url)?.origin ?? url.slice(0, 64)
    throw brokerError(why === 'listed' ? 'providerNotAllowed' : 'providerAddressNotAllowed', { field, origin })
  }
}
