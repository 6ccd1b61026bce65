import { useRef, useState } from 'react'

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
  const ref = useRef(initial)
  const [, rerender] = useState(0)
  const clamp = (i: number) => Math.max(0, Math.min(Math.max(0, count - 1), i))
  const set = (i: number) => {
    ref.current = clamp(i)
    rerender((n) => n + 1)
  }
  return { index: clamp(ref.current), move: (delta) => set(ref.current + delta), set, current: () => clamp(ref.current) }
}
