/**
 * Phases of the request lifecycle and the phase sets, as data.
 * The order below is Kong's (`private/phases.lua` bit order): error messages list phases in it.
 */
export const PHASE_ORDER = [
  'init_worker',
  'certificate',
  'rewrite',
  'access',
  'balancer',
  'response',
  'header_filter',
  'body_filter',
  'timer',
  'log',
  'preread',
  'admin_api',
] as const

export type Phase = (typeof PHASE_ORDER)[number]

/**
 * Every phase name Kong's phase checker knows, in its bit order: the runnable phases plus
 * `client_hello`, `cluster_listener` and `error`, which appear in Kong's messages only.
 */
const KONG_NAMES = [
  'init_worker',
  'certificate',
  'client_hello',
  'rewrite',
  'access',
  'balancer',
  'response',
  'cluster_listener',
  'header_filter',
  'body_filter',
  'timer',
  'log',
  'preread',
  'error',
  'admin_api',
] as const

/** A phase name as Kong's messages may list it. */
export type KongPhase = (typeof KONG_NAMES)[number]

const RANK: Record<string, number> = Object.fromEntries(KONG_NAMES.map((p, i) => [p, i]))
const BIT: Record<string, number> = Object.fromEntries(KONG_NAMES.map((p, i) => [p, 1 << i]))

/** A set of phases, kept sorted in Kong's order so messages come out right. */
export type PhaseSet = readonly KongPhase[]

/** Builds a phase set from names in any order. */
export function phaseSet(...phases: KongPhase[]): PhaseSet {
  return Object.freeze([...new Set(phases)].sort((a, b) => RANK[a]! - RANK[b]!))
}

/** The sets the reference names (A, B, C, H, R, D, P, ALL); where Kong's code has the same set, KONG names it too. */
export const SETS = {
  A: phaseSet('rewrite', 'access', 'header_filter', 'response', 'body_filter', 'log', 'admin_api'),
  B: phaseSet('certificate', 'rewrite', 'access', 'header_filter', 'response', 'body_filter', 'log'),
  C: phaseSet('access', 'header_filter', 'response', 'body_filter', 'log'),
  H: phaseSet('rewrite', 'access', 'header_filter', 'response', 'admin_api'),
  R: phaseSet('header_filter', 'response', 'body_filter', 'log', 'admin_api'),
  D: phaseSet('rewrite', 'access', 'response', 'admin_api'),
  P: phaseSet('rewrite', 'access', 'header_filter', 'response', 'body_filter', 'log'),
  ALL: phaseSet('init_worker', 'certificate', 'rewrite', 'access', 'header_filter', 'response', 'body_filter', 'log'),
} as const

/** The sets Kong's code checks (`kong/pdk/*.lua`), named as there. */
export const KONG = {
  /** `PHASES.request` of private/phases.lua. */
  request: phaseSet(
    'rewrite',
    'access',
    'balancer',
    'response',
    'header_filter',
    'body_filter',
    'log',
    'error',
    'admin_api',
    'cluster_listener',
  ),
  /** request.lua `before_content`. */
  before_content: phaseSet('rewrite', 'access', 'response', 'error', 'admin_api'),
  /** response.lua `header_body_log`. */
  header_body_log: phaseSet('response', 'header_filter', 'body_filter', 'log', 'error', 'admin_api'),
  /** response.lua `rewrite_access_header`. */
  rewrite_access_header: phaseSet('rewrite', 'access', 'response', 'balancer', 'header_filter', 'error', 'admin_api'),
  /** client.lua, router.lua `AUTH_AND_LATER` / `ROUTER_PHASES`: the reference's C, the same set. */
  auth_and_later: SETS.C,
  /** log.lua `phases_with_ctx`: the reference's P, the same set. */
  with_ctx: SETS.P,
} as const

/** What one kit function accepts: Kong's check (always) and the reference's list (under --strict). */
export interface PhaseRule {
  /** Bit mask of the phases Kong's code accepts. */
  readonly kong: number
  /** Bit mask of the phases the reference lists. */
  readonly ref: number
  /** Kong's `check_not_phase`: `kong` is the complement of the rejected phases. */
  readonly except: boolean
  readonly kongNames: string
  readonly refNames: string
}

// Kong's code checks no phase for these functions
const ANY = 'any phase'
const maskOf = (set: PhaseSet): number => set.reduce((m, p) => m | BIT[p]!, 0)
const ALL_BITS = KONG_NAMES.reduce((m, p) => m | BIT[p]!, 0)

/** A rule from Kong's accepted set (`{ except }` for Kong's check_not, `'any'` for no check) and the reference's set. */
export function phaseRule(kong: PhaseSet | { except: PhaseSet } | 'any', ref?: PhaseSet): PhaseRule {
  const except = typeof kong === 'object' && 'except' in kong
  // a timer has no phase in ngx.ctx: only functions that check none work there
  const kongMask =
    kong === 'any' ? ALL_BITS : except ? ALL_BITS & ~maskOf(kong.except) & ~BIT.timer! : maskOf(kong as PhaseSet)
  const kongNames = kong === 'any' ? ANY : (except ? kong.except : (kong as PhaseSet)).join(', ')
  const refSet = ref ?? (kong === 'any' || except ? undefined : (kong as PhaseSet))
  return Object.freeze({
    kong: kongMask,
    ref: refSet ? maskOf(refSet) : kongMask,
    except,
    kongNames,
    refNames: refSet ? refSet.join(', ') : kongNames,
  })
}

/** Something that knows the phase being run (the request context), and whether --strict is on. */
export interface PhaseHolder {
  phase: Phase
  strict?: boolean
}

/**
 * Throws Kong's message unless Kong's code accepts the current phase; under --strict, also
 * unless the reference lists it (both lists in the message). A phase set is taken as a rule
 * that Kong and the reference share.
 */
export function checkPhase(holder: PhaseHolder, allowed: PhaseRule | PhaseSet): void {
  const rule = Array.isArray(allowed) ? ruleOf(allowed as PhaseSet) : (allowed as PhaseRule)
  const bit = BIT[holder.phase]!
  if ((rule.kong & bit) !== 0 && (!holder.strict || (rule.ref & bit) !== 0)) return
  throw new Error(phaseMessage(holder, rule))
}

const setRules = new WeakMap<PhaseSet, PhaseRule>()
function ruleOf(set: PhaseSet): PhaseRule {
  let rule = setRules.get(set)
  if (!rule) setRules.set(set, (rule = phaseRule(set)))
  return rule
}

function phaseMessage(holder: PhaseHolder, rule: PhaseRule): string {
  const phase = holder.phase
  const bit = BIT[phase]!
  // a timer runs outside any request: Kong finds no phase in ngx.ctx
  if (phase === 'timer' && rule.kongNames !== ANY)
    return rule.except
      ? 'no phase in ngx.ctx.KONG_PHASE'
      : `no phase in ngx.ctx.KONG_PHASE, (need one of ${rule.kongNames})`
  if ((rule.kong & bit) !== 0) {
    const kongList = rule.except ? `any phases except: ${rule.kongNames}` : rule.kongNames
    return `function cannot be called in ${phase} phase under --strict (the reference lists only: ${rule.refNames}; Kong's code allows: ${kongList})`
  }
  if (rule.except)
    return `function cannot be called in ${phase} phase (can be called in any phases except: ${rule.kongNames})`
  return `function cannot be called in ${phase} phase (only in: ${rule.kongNames})`
}

/** The default lifecycle of a scenario for each subsystem. */
export const LIFECYCLE = {
  http: Object.freeze([
    'certificate',
    'rewrite',
    'access',
    'balancer',
    'response',
    'header_filter',
    'body_filter',
    'log',
  ] as Phase[]),
  stream: Object.freeze(['certificate', 'preread', 'balancer', 'log'] as Phase[]),
} as const

/** Phases that run before the proxied service answers. */
export const BEFORE_UPSTREAM: readonly Phase[] = Object.freeze([
  'certificate',
  'rewrite',
  'access',
  'balancer',
  'preread',
] as Phase[])
