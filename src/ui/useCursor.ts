import { useStateRef } from './useStateRef.js'

export interface Cursor {
  /** The position, kept within 0 … count-1. */
  readonly index: number
  move(delta: number): void
  set(index: number): void
  /** The position now, even before a re-render (keys that arrive together: ↓↓ Enter). */
  current(): number
}

/** A selection in a list of `count` rows, moved by keys. */
export function useCursor(count: number, initial = 0): Cursor {
  const [position, setPosition, latest] = useStateRef(initial)
  const clamp = (i: number) => Math.max(0, Math.min(Math.max(0, count - 1), i))
  const set = (i: number) => setPosition(clamp(i))
  return { index: clamp(position), move: (delta) => set(latest() + delta), set, current: () => clamp(latest()) }
}
