import { describe, expect, it } from 'vitest'
import { kitFor } from '../runner/harness.js'
import { bytesToStr } from './node.js'

const memory = {
  lua_shared_dicts: { kong: { capacity: 5 * 1024 * 1024, allocated_slabs: 1536 } },
  workers_lua_vms: [
    { pid: 20, http_allocated_gc: 3 * 1024 ** 3 },
    { pid: 10, http_allocated_gc: 1000.7 },
  ],
}

describe('node', () => {
  it("without a fixture's node.memory, lists the dictionaries a Kong 3.x node declares, prometheus_metrics included", () => {
    const { kit } = kitFor({})
    const dicts = kit.node.get_memory_stats().lua_shared_dicts
    expect(Object.keys(dicts).sort()).toEqual(
      [
        'kong',
        'kong_cluster_events',
        'kong_core_db_cache',
        'kong_core_db_cache_miss',
        'kong_db_cache',
        'kong_db_cache_miss',
        'kong_healthchecks',
        'kong_locks',
        'kong_rate_limiting_counters',
        'kong_secrets',
        'prometheus_metrics',
      ].sort(),
    )
    expect(dicts.prometheus_metrics).toEqual({ capacity: 5 * 1024 * 1024, allocated_slabs: 12288 })
    expect(dicts.kong_db_cache!.capacity).toBe(128 * 1024 * 1024)
  })

  it('reports memory in bytes as numbers by default, workers sorted by pid', () => {
    const { kit } = kitFor({ node: { memory } })
    expect(kit.node.get_memory_stats()).toEqual({
      lua_shared_dicts: { kong: { capacity: 5242880, allocated_slabs: 1536 } },
      workers_lua_vms: [
        { pid: 10, http_allocated_gc: 1000 },
        { pid: 20, http_allocated_gc: 3221225472 },
      ],
    })
  })

  it('reports other units as strings with a suffix and scale', () => {
    const { kit } = kitFor({ node: { memory } })
    const stats = kit.node.get_memory_stats('m', 1)
    expect(stats.lua_shared_dicts.kong).toEqual({ capacity: '5.0 MiB', allocated_slabs: '0.0 MiB' })
    expect(kit.node.get_memory_stats('K').lua_shared_dicts.kong.allocated_slabs).toBe('1.50 KiB')
    expect(kit.node.get_memory_stats('G', 3).workers_lua_vms[1].http_allocated_gc).toBe('3.000 GiB')
  })

  it('rounds exact ties to even as C printf does, not up as toFixed', () => {
    expect(bytesToStr(2560, 'k', 0)).toBe('2 KiB')
    expect(bytesToStr(3584, 'k', 0)).toBe('4 KiB')
    expect(bytesToStr(128, 'k', 2)).toBe('0.12 KiB')
    expect(bytesToStr(1152, 'k', 2)).toBe('1.12 KiB')
    expect(bytesToStr(1408, 'k', 2)).toBe('1.38 KiB')
    expect(bytesToStr(5497558, 'm')).toBe('5.24 MiB')
  })

  it("rejects bad units and scales with Kong's messages", () => {
    const { kit } = kitFor()
    expect(() => kit.node.get_memory_stats('t')).toThrow("invalid unit 't' (expected 'k/K', 'm/M', or 'g/G')")
    expect(() => kit.node.get_memory_stats('constructor')).toThrow(
      "invalid unit 'constructor' (expected 'k/K', 'm/M', or 'g/G')",
    )
    expect(() => kit.node.get_memory_stats('k', -1)).toThrow('scale must be equal or greater than 0')
  })

  it('gives the configured id and hostname', () => {
    const { kit } = kitFor({ node: { id: 'e7a0b3d0-1111-4222-8333-444455556666', hostname: 'gw-1' } })
    expect(kit.node.get_id()).toBe('e7a0b3d0-1111-4222-8333-444455556666')
    expect(kit.node.get_hostname()).toBe('gw-1')
  })

  it('derives a v4 UUID when none is configured', () => {
    expect(kitFor().kit.node.get_id()).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
  })

  it('bytesToStr floors bytes', () => {
    expect(bytesToStr(10.9)).toBe(10)
  })
})
