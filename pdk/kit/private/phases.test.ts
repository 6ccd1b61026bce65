import { describe, expect, it } from 'vitest'
import { checkPhase, KONG, LIFECYCLE, PHASE_ORDER, phaseRule, phaseSet, SETS } from './phases.js'

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
    expect(KONG.auth_and_later).toBe(SETS.C)
    expect(KONG.with_ctx).toBe(SETS.P)
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

  it("checks Kong's set always and the reference's only under --strict, naming both", () => {
    const rule = phaseRule(KONG.request, SETS.A)
    expect(() => checkPhase({ phase: 'balancer' }, rule)).not.toThrow()
    expect(() => checkPhase({ phase: 'balancer', strict: true }, rule)).toThrow(
      "function cannot be called in balancer phase under --strict (the reference lists only: rewrite, access, response, header_filter, body_filter, log, admin_api; Kong's code allows: rewrite, access, balancer, response, cluster_listener, header_filter, body_filter, log, error, admin_api)",
    )
    expect(() => checkPhase({ phase: 'init_worker' }, rule)).toThrow(
      'function cannot be called in init_worker phase (only in: rewrite, access, balancer, response, cluster_listener, header_filter, body_filter, log, error, admin_api)',
    )
  })

  it("words Kong's check_not and a timer's missing phase as Kong does", () => {
    const notInit = phaseRule({ except: phaseSet('init_worker') }, SETS.B)
    expect(() => checkPhase({ phase: 'admin_api' }, notInit)).not.toThrow()
    expect(() => checkPhase({ phase: 'init_worker' }, notInit)).toThrow(
      'function cannot be called in init_worker phase (can be called in any phases except: init_worker)',
    )
    expect(() => checkPhase({ phase: 'timer' }, notInit)).toThrow(/^no phase in ngx.ctx.KONG_PHASE$/)
    expect(() => checkPhase({ phase: 'timer' }, phaseRule(phaseSet('access')))).toThrow(
      'no phase in ngx.ctx.KONG_PHASE, (need one of access)',
    )
    expect(() => checkPhase({ phase: 'timer' }, phaseRule('any', SETS.ALL))).not.toThrow()
  })
})
