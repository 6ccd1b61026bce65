/**
 * Phases of the request lifecycle and the phase sets of the reference, as data.
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

const RANK: Record<string, number> = Object.fromEntries(PHASE_ORDER.map((p, i) => [p, i]))

/** A set of phases, kept sorted in Kong's order so messages come out right. */
export type PhaseSet = readonly Phase[]

/** Builds a phase set from names in any order. */
export function phaseSet(...phases: Phase[]): PhaseSet {
  return Object.freeze([...new Set(phases)].sort((a, b) => RANK[a]! - RANK[b]!))
}

/** The sets the reference names (A, B, C, H, R, D, P, ALL) plus Kong's auth_and_later. */
export const SETS = {
  A: phaseSet('rewrite', 'access', 'header_filter', 'response', 'body_filter', 'log', 'admin_api'),
  B: phaseSet('certificate', 'rewrite', 'access', 'header_filter', 'response', 'body_filter', 'log'),
  C: phaseSet('access', 'header_filter', 'response', 'body_filter', 'log'),
  H: phaseSet('rewrite', 'access', 'header_filter', 'response', 'admin_api'),
  R: phaseSet('header_filter', 'response', 'body_filter', 'log', 'admin_api'),
  D: phaseSet('rewrite', 'access', 'response', 'admin_api'),
  P: phaseSet('rewrite', 'access', 'header_filter', 'response', 'body_filter', 'log'),
  ALL: phaseSet('init_worker', 'certificate', 'rewrite', 'access', 'header_filter', 'response', 'body_filter', 'log'),
  AUTH_AND_LATER: phaseSet('access', 'header_filter', 'response', 'body_filter', 'log'),
} as const

/** Something that knows the phase being run (the request context). */
export interface PhaseHolder {
  phase: Phase
}

/** Throws Kong's message unless the current phase is in `allowed`. */
export function checkPhase(holder: PhaseHolder, allowed: PhaseSet): void {
  if (allowed.includes(holder.phase)) return
  throw new Error(`function cannot be called in ${holder.phase} phase (only in: ${allowed.join(', ')})`)
}

/** The default lifecycle of a scenario for each subsystem. */
export const LIFECYCLE = {
  http: phaseSet('certificate', 'rewrite', 'access', 'balancer', 'response', 'header_filter', 'body_filter', 'log'),
  stream: Object.freeze(['certificate', 'preread', 'balancer', 'log'] as Phase[]),
} as const

/** Phases that run before the proxied service answers. */
export const BEFORE_UPSTREAM = phaseSet('certificate', 'rewrite', 'access', 'balancer', 'preread')
