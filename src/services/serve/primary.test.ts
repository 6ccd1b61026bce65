import { describe, expect, it } from 'vitest'
import { workerEnv } from './primary.js'

describe("a worker's environment", () => {
  it('sets glibc malloc to a fixed mmap threshold, unless the user set malloc up', () => {
    expect(workerEnv({ PATH: '/usr/bin' })).toEqual({ MALLOC_MMAP_THRESHOLD_: '32768' })
    expect(workerEnv({ MALLOC_ARENA_MAX: '2' })).toEqual({})
    expect(workerEnv({ MALLOC_MMAP_THRESHOLD_: '65536' })).toEqual({})
    expect(workerEnv({ GLIBC_TUNABLES: 'glibc.malloc.trim_threshold=0' })).toEqual({})
  })
})
