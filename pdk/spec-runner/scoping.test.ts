import { describe, expect, it } from 'vitest'
import { candidates, globals, pick, Scoping } from './scoping.js'

const route = { id: 'r1' }
const service = { id: 's1' }
const p = (id: string, name: string, scope: Record<string, unknown> = {}) => ({ id, name, ...scope })

describe('plugin scoping', () => {
  it("candidates: enabled rows of this route and service, or of none; a consumer's stay for later", () => {
    const plugins = [
      p('off', 'a', { enabled: false }),
      p('elsewhere', 'b', { route: { id: 'r2' } }),
      p('consumer', 'c', { consumer: { id: 'c1' } }),
      p('on', 'd'),
      p('here', 'e', { route: { id: 'r1' }, service: { id: 's1' } }),
    ]
    expect(candidates(plugins, route, service).map((x) => x.id)).toEqual(['consumer', 'on', 'here'])
  })

  it('globals: the enabled rows of no route, service or consumer (what runs on a request no route matched)', () => {
    const plugins = [
      p('off', 'a', { enabled: false }),
      p('routed', 'b', { route: { id: 'r1' } }),
      p('serviced', 'c', { service: { id: 's1' } }),
      p('consumer', 'd', { consumer: { id: 'c1' } }),
      p('on', 'e'),
    ]
    expect(globals(plugins).map((x) => x.id)).toEqual(['on'])
  })

  it("Kong's precedence, most specific first", () => {
    const rows = [
      p('global', 'a'),
      p('s', 'a', { service: { id: 's1' } }),
      p('r', 'a', { route: { id: 'r1' } }),
      p('c', 'a', { consumer: { id: 'c1' } }),
      p('rs', 'a', { route: { id: 'r1' }, service: { id: 's1' } }),
      p('sc', 'a', { service: { id: 's1' }, consumer: { id: 'c1' } }),
      p('rc', 'a', { route: { id: 'r1' }, consumer: { id: 'c1' } }),
      p('rsc', 'a', { route: { id: 'r1' }, service: { id: 's1' }, consumer: { id: 'c1' } }),
    ]
    const order: string[] = []
    const left = [...rows]
    while (left.length) {
      const got = pick(left, route, service, 'c1')!
      order.push(got.id)
      left.splice(left.indexOf(got), 1)
    }
    expect(order).toEqual(['rsc', 'rc', 'sc', 'rs', 'c', 'r', 's', 'global'])
    // without a consumer, a consumer's instances never apply
    expect(pick([p('c', 'a', { consumer: { id: 'c1' } })], route, service, undefined)).toBeUndefined()
    expect(pick([p('c', 'a', { consumer: { id: 'c2' } }), p('g', 'a')], route, service, 'c1')!.id).toBe('g')
  })

  it('rewrite runs global instances only; access picks by the consumer known then; later phases keep that pick', () => {
    const rows = [p('g', 'a'), p('c', 'a', { consumer: { id: 'c1' } }), p('r', 'b', { route: { id: 'r1' } })]
    const s = new Scoping(rows, route, service)
    expect(s.runs(rows[0]!, 'a', 'rewrite', undefined)).toBe(true)
    expect(s.runs(rows[2]!, 'b', 'rewrite', undefined)).toBe(false)
    expect(s.runs(rows[2]!, 'b', 'access', undefined)).toBe(true)
    // the consumer was authenticated before plugin a was reached
    expect(s.runs(rows[0]!, 'a', 'access', 'c1')).toBe(false)
    expect(s.runs(rows[1]!, 'a', 'access', 'c1')).toBe(true)
    expect(s.runs(rows[1]!, 'a', 'log', undefined)).toBe(true)
    expect(s.runs(rows[0]!, 'a', 'header_filter', 'c1')).toBe(false)
  })

  it('when access never ran (the request ended in rewrite), response phases run the global instances', () => {
    const rows = [p('g', 'a'), p('r', 'a', { route: { id: 'r1' } })]
    const s = new Scoping(rows, route, service)
    expect(s.runs(rows[0]!, 'a', 'header_filter', undefined)).toBe(true)
    expect(s.runs(rows[1]!, 'a', 'header_filter', undefined)).toBe(false)
  })
})
