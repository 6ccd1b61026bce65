import { useRef, useState } from 'react'

/**
 * State whose latest value can be read at once through `get()`: keys that arrive together (text
 * then Enter, as a paste or a fast typist sends them) are handled before React re-renders.
 */
export function useStateRef<T>(initial: T): [T, (next: T | ((current: T) => T)) => void, () => T] {
  const ref = useRef(initial)
  const [state, setState] = useState(initial)
  const set = (next: T | ((current: T) => T)) => {
    ref.current = typeof next === 'function' ? (next as (current: T) => T)(ref.current) : next
    setState(ref.current)
  }
  return [state, set, () => ref.current]
}
