import { type Key, useInput } from 'ink'
import { useCallback, useLayoutEffect, useRef } from 'react'

/**
 * useInput whose handler is always the one of the last commit. Ink re-subscribes a new handler in
 * a passive effect, so a key arriving right after a render would otherwise see the state before it.
 */
export function useKeys(handler: (input: string, key: Key) => void, options: { isActive?: boolean } = {}): void {
  const latest = useRef(handler)
  useLayoutEffect(() => {
    latest.current = handler
  })
  const stable = useCallback((input: string, key: Key) => latest.current(input, key), [])
  useInput(stable, options)
}
