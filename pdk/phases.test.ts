import { describe, expect, it } from 'vitest'
import { checkPhase, LIFECYCLE, PHASE_ORDER, phaseSet, SETS } from './phases.js'

describe('phases', () => {
  it("keeps Kong's lifecycle order of phases", () => {
    expect(PHASE_ORDER).toEqual([
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
    ])
  })

  it('sorts a phase set into that order whatever order it was written in', () => {
    expect(phaseSet('log', 'admin_api', 'rewrite', 'header_filter', 'response')).toEqual([
      'rewrite',
      'response',
      'header_filter',
      'log',
      'admin_api',
    ])
  })

  it('defines the reference sets', () => {
    expect(SETS.A).toEqual(['rewrite', 'access', 'response', 'header_filter', 'body_filter', 'log', 'admin_api'])
    expect(SETS.B).toEqual(['certificate', 'rewrite', 'access', 'response', 'header_filter', 'body_filter', 'log'])
    expect(SETS.C).toEqual(['access', 'response', 'header_filter', 'body_filter', 'log'])
    expect(SETS.H).toEqual(['rewrite', 'access', 'response', 'header_filter', 'admin_api'])
    expect(SETS.R).toEqual(['response', 'header_filter', 'body_filter', 'log', 'admin_api'])
    expect(SETS.D).toEqual(['rewrite', 'access', 'response', 'admin_api'])
    expect(SETS.P).toEqual(['rewrite', 'access', 'response', 'header_filter', 'body_filter', 'log'])
    expect(SETS.ALL).toEqual([
      'init_worker',
      'certificate',
      'rewrite',
      'access',
      'response',
      'header_filter',
      'body_filter',
      'log',
    ])
    expect(SETS.AUTH_AND_LATER).toEqual(SETS.C)
  })

  it("throws Kong's message listing the allowed phases in order", () => {
    expect(() => checkPhase({ phase: 'log' }, SETS.H)).toThrow(
      'function cannot be called in log phase (only in: rewrite, access, response, header_filter, admin_api)',
    )
  })

  it('lets a call through in an allowed phase', () => {
    expect(() => checkPhase({ phase: 'access' }, SETS.C)).not.toThrow()
  })

  it('runs http and stream lifecycles in order', () => {
    expect(LIFECYCLE.http).toEqual([
      'certificate',
      'rewrite',
      'access',
      'balancer',
      'response',
      'header_filter',
      'body_filter',
      'log',
    ])
    expect(LIFECYCLE.stream).toEqual(['certificate', 'preread', 'balancer', 'log'])
  })
})
