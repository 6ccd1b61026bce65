import type { FlowRecord } from '../../../flows/contract.js'
import { urlParts } from '../../../flows/lib/urls.js'
import { type BrokerError, brokerError } from '../../errors/index.js'
import { urlHasCredentials } from '../../redact.js'
import { classifyAddress, isIpLiteral } from '../../config/addresses.js'
import { PROVIDER_URL_FIELDS, type ProviderPolicy, providerPolicy } from './policy.js'
import { ClearingMap } from '../../../util/clearing-map.js'

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

/** What /store's destination checks found: each field's problem, and the refusal to answer when refusals are all. */
export interface DestinationProblems {
  /** Every field's problem; undefined when there is none. */
  problems?: Record<string, string>
  /** PROVIDER_NOT_ALLOWED (or its address variants) naming the first refused field, when any was refused. */
  refused?: BrokerError
  /** How many of the problems are refused destinations. */
  refusals: number
}

/**
 * The /store checks of where a record sends the broker and its users: every provider URL field
 * must be a clean http(s) URL without credentials, allowed by the provider policy; the callback
 * carries no credentials; header-bound fields hold only what a header may. Found, not thrown: the
 * record's other problems are named beside them (validateRecord).
 */
export function destinationProblems(record: Readonly<FlowRecord>, policy = providerPolicy()): DestinationProblems {
  let problems: Record<string, string> | undefined
  let refused: BrokerError | undefined
  let refusals = 0
  for (const field of PROVIDER_URL_FIELDS) {
    const value = record[field]
    if (value === undefined) continue
    const url = String(value)
    const verdict = verdictOf(url, policy)
    if (verdict === OK) continue
    if (!(verdict in REFUSALS)) {
      ;(problems ??= {})[field] = verdict
      continue
    }
    const { message, problem } = REFUSALS[verdict as Refusal]
    refusals++
    refused ??= brokerError(message, { field, origin: urlParts(url)?.origin ?? url.slice(0, 64) })
    ;(problems ??= {})[field] = problem
  }
  // An app's own callback parameters are its business; a password in it is not.
  if (typeof record.callback === 'string' && USERINFO.test(record.callback))
    (problems ??= {}).callback = 'must not carry credentials (user:password@)'
  for (const [field, allowed, message] of HEADER_FIELDS) {
    const value = record[field]
    if (value !== undefined && !allowed.test(String(value))) (problems ??= {})[field] = message
  }
  return problems ? { problems, refused, refusals } : CLEAN
}

// Every /store of a clean record answers this one object rather than a new one.
const CLEAN: DestinationProblems = Object.freeze({ refusals: 0 })

/**
 * destinationProblems, thrown: PROVIDER_NOT_ALLOWED naming the (first) field when refused
 * destinations are the only problems, else VALIDATION with all.
 */
export function checkRecordDestinations(record: Readonly<FlowRecord>, policy = providerPolicy()): void {
  const { problems, refused, refusals } = destinationProblems(record, policy)
  if (!problems) return
  // Only refused destinations (often authorize_url and access_url together): PROVIDER_NOT_ALLOWED, naming the first.
  if (refused && Object.keys(problems).length === refusals) throw refused
  throw brokerError('invalidRecord', { fields: problems })
}

const OK = ''
type Refusal = 'listed' | 'address' | 'forbidden'
type Verdict = typeof OK | Refusal | (string & {})

/** Each refusal's message, and its words in a VALIDATION answer beside other problems. */
const REFUSALS = {
  listed: { message: 'providerNotAllowed', problem: 'is not in providers.allow' },
  address: { message: 'providerAddressNotAllowed', problem: 'names an internal address this broker does not call' },
  forbidden: {
    message: 'providerAddressForbidden',
    problem: 'names a link-local, metadata or reserved address that no provider has',
  },
} as const satisfies Record<Refusal, { message: string; problem: string }>

// Per policy, what each provider URL text came to: apps send the same few URLs with every /store,
// and the checks of one URL cost about a microsecond (regexes, the allow-list) where a lookup costs
// a few nanoseconds. Bounded like urls.ts's parts: the map starts over when full.
const MAX_KEPT = 512
const verdicts = new WeakMap<ProviderPolicy, ClearingMap<string, Verdict>>()

function verdictOf(url: string, policy: ProviderPolicy): Verdict {
  let kept = verdicts.get(policy)
  const hit = kept?.get(url)
  if (hit !== undefined) return hit
  const verdict = urlProblem(url) ?? destinationRefused(url, policy) ?? OK
  if (url.length <= 2048) {
    if (!kept) verdicts.set(policy, (kept = new ClearingMap(MAX_KEPT)))
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
 * Why a URL is no destination, as far as /store can tell without DNS: an address literal no provider
 * can have ('forbidden': link-local, metadata …, whatever the list says), not under providers.allow
 * ('listed'), or an address literal (or localhost) the policy does not permit ('address'). Names are
 * judged again on their resolved addresses when the request is made.
 */
export function destinationRefused(url: string, policy = providerPolicy()): Refusal | undefined {
  const host = urlParts(url)?.hostname ?? ''
  const literal = isIpLiteral(host)
  if (literal && classifyAddress(host) === 'forbidden') return 'forbidden'
  if (!policy.allows(url)) return 'listed'
  if (literal) return policy.permits(host, host) ? undefined : 'address'
  if (host === 'localhost' || host.endsWith('.localhost'))
    return policy.permits(host, '127.0.0.1') ? undefined : 'address'
  return undefined
}

/** For URLs met after /store (a provider's metadata): throws PROVIDER_NOT_ALLOWED naming `field` unless allowed. */
export function assertProviderUrl(field: string, url: string, policy: ProviderPolicy = providerPolicy()): void {
  const problem = urlProblem(url)
  if (problem) throw brokerError('invalidRecord', { fields: { [field]: problem } })
  const why = destinationRefused(url, policy)
  if (why) throw brokerError(REFUSALS[why].message, { field, origin: urlParts(url)?.origin ?? url.slice(0, 64) })
}
