import { type Key, useInput } from 'ink'
import { useCallback, useLayoutEffect, useRef } from 'react'

/**
 * useInput whose handler and `isActive` are always those of the last commit. Ink subscribes a new
 * handler, and turns `isActive` on, in a passive effect: a key arriving right after a render (a
 * panel just switched to, on a loaded machine) would otherwise see the state before it, or be
 * dropped. So the subscription stays on, and the handler reads both from refs set as the render commits.
 */
export function useKeys(handler: (input: string, key: Key) => void, options: { isActive?: boolean } = {}): void {
  const latest = useRef(handler)
  const active = useRef(options.isActive !== false)
  useLayoutEffect(() => {
    latest.current = handler
    active.current = options.isActive !== false
  })
  const stable = useCallback((input: string, key: Key) => {
    if (active.current) latest.current(input, key)
  }, [])
  useInput(stable)
}
