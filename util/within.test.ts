import { describe, expect, it, vi } from 'vitest'
import { within } from './within.js'

describe('within', () => {
  it('answers what the promise settles to in time, else the late value, and leaves no timer behind', async () => {
    vi.useFakeTimers()
    try {
      expect(await within(Promise.resolve('done'), 100, 'late')).toBe('done')
      expect(vi.getTimerCount()).toBe(0)
      const slow = within(new Promise<string>(() => undefined), 100, 'late')
      await vi.advanceTimersByTimeAsync(100)
      expect(await slow).toBe('late')
      await expect(within(Promise.reject(new Error('no')), 100, 'late')).rejects.toThrow('no')
      expect(vi.getTimerCount()).toBe(0)
    } finally {
      vi.useRealTimers()
    }
  })
})
